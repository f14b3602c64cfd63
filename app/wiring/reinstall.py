"""Who tomo is in Slack at start-up, and tomo's workspace again after an uninstall: when an
event proved a reinstall while Slack still refuses the token, Slack is asked until it takes
the token, and then every conversation owed a judgment or a reply gets its timer back
(docs/data-and-privacy.md#installing-it-again)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from app.context.directory import Directory
from app.retention.guard import installed_again, workspace_gone
from app.slack.identity import Identity
from app.slack.web.client import SlackClient
from app.wiring.tasks import Background

logger = logging.getLogger(__name__)

SLACK_RESUME = "slack-resume"
SLACK_CHECK = "slack-check"


@dataclass(frozen=True, kw_only=True)
class SlackAccess:
    engine: AsyncEngine
    slack: SlackClient
    identity: Identity
    directory: Directory
    tasks: Background
    restore_timers: Callable[[], Awaitable[int]]  # what is owed gets its timers (app.wiring.owed)

    async def at_start(self) -> None:
        """Start-up: auth.test (once only while the workspace is gone), then the token's check
        and the channel list."""
        await self.directory.load_bots()
        gone = await workspace_gone(self.engine)
        if gone is not None and not await installed_again(self.engine, self.slack, gone):
            self.identity.gone(gone)  # until an event shows the app installed again
            return
        await self.identity.learn(self.slack)
        self.tasks.spawn(
            self.identity.watch(self.slack, stop=lambda: workspace_gone(self.engine)), SLACK_CHECK
        )
        await self.directory.sync_channels()

    def resume(self) -> None:
        """A message was stored after a reinstall while this process holds the token refused:
        auth.test again (a refused token every few minutes) until Slack takes it; then what is
        owed gets its timers (`works_again`)."""
        if self.tasks.any_named(SLACK_RESUME, "identity"):
            return
        self.tasks.spawn(self._resume(), SLACK_RESUME)

    async def _resume(self) -> None:
        async def stop() -> str | None:
            return await workspace_gone(self.engine)

        await self.identity.learn(self.slack, stop=stop)
        if not self.tasks.any_named(SLACK_CHECK):
            self.tasks.spawn(self.identity.watch(self.slack, stop=stop), SLACK_CHECK)

    def works_again(self) -> None:
        """Slack takes the token after refusing it: what waited is owed now."""
        logger.info("Slack takes the bot token again: the conversations owed get their timers")
        self.tasks.spawn(self._owed_again(), "owed-again")

    async def _owed_again(self) -> None:
        try:
            await self.restore_timers()
            await self.directory.sync_channels()
        except Exception:  # the next start restores them as well
            logger.exception("restoring the timers of what is owed failed")

    def stop(self) -> None:
        """The workspace is gone: this process's check of the bot token stops, and the token
        counts as refused until Slack takes it again."""
        self.identity.gone("the app was uninstalled")
        self.tasks.cancel(SLACK_CHECK, SLACK_RESUME)
