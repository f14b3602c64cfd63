"""Who tomo is in Slack, learnt with auth.test at start-up and retried until Slack answers."""

from __future__ import annotations

import asyncio
import logging

from app.services.context import Self
from app.slack.client import SlackClient, SlackError

logger = logging.getLogger(__name__)


class Identity:
    def __init__(self) -> None:
        self.user_id: str | None = None
        self.bot_id: str | None = None
        self.team_id: str | None = None
        self.known = asyncio.Event()

    def know(self, *, user_id: str, bot_id: str | None, team_id: str | None) -> None:
        self.user_id, self.bot_id, self.team_id = user_id, bot_id, team_id
        self.known.set()

    def snapshot(self) -> dict[str, str | None]:
        """Who tomo is, for the job worker (which learns it from its parent, not Slack)."""
        return {"user_id": self.user_id, "bot_id": self.bot_id, "team_id": self.team_id}

    def me(self) -> Self:
        return Self(user_id=self.user_id, bot_id=self.bot_id)

    async def learn(self, slack: SlackClient, *, first_delay: float = 1.0) -> None:
        """Call auth.test until it succeeds (backing off to a minute between tries)."""
        delay = first_delay
        while True:
            try:
                bot = await slack.auth_test()
            except SlackError as error:
                logger.warning("auth.test failed, retrying in %.0f s: %s", delay, error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 60.0)
                continue
            self.know(user_id=bot.user_id, bot_id=bot.bot_id, team_id=bot.team_id)
            logger.info("bot user id %s (bot id %s, team %s)", bot.user_id, bot.bot_id, bot.team_id)
            return
