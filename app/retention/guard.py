"""Once the app is uninstalled (or its bot token revoked), nothing more goes to Slack or the
model for the workspace: the periodic jobs that would call them ask the database first, so
the whole fleet stops, not only the instance that got the event."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db import erasure
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)


async def workspace_gone(engine: AsyncEngine) -> str | None:
    """Why the workspace is gone (app_uninstalled, tokens_revoked), or None."""
    async with engine.connect() as connection:
        return await erasure.workspace_gone(connection)


def unless_workspace_gone(
    engine: AsyncEngine, func: Callable[[], Awaitable[Any]], *, what: str
) -> Callable[[], Awaitable[Any]]:
    """`func`, skipped while the workspace is gone."""

    async def run() -> Any:
        reason = await workspace_gone(engine)
        if reason is not None:
            logger.info("%s skipped: the workspace is gone (%s)", what, reason)
            return None
        return await func()

    return run


async def installed_again(engine: AsyncEngine, slack: SlackClient, reason: str) -> bool:
    """After an uninstall, one auth.test: a token Slack takes means the app was installed
    again, and the workspace is tomo's again; a refused one, and nothing more is tried."""
    try:
        await slack.auth_test()
    except SlackError as error:
        logger.warning(
            "the workspace is gone (%s) and Slack refuses the bot token (%s): tomo calls "
            "neither Slack nor the model; install the app again, set its new SLACK_BOT_TOKEN "
            "and restart",
            reason,
            error.error,
        )
        return False
    async with engine.begin() as connection:
        lifted = await erasure.welcome_back(connection)
    logger.info("the bot token works again: the workspace is tomo's again")
    return lifted > 0 or await workspace_gone(engine) is None
