"""Who tomo is in Slack, learnt with auth.test at start-up and retried until Slack answers, and
whether Slack takes tomo's token now (`/healthz`'s `slack`: ok, unreachable or unauthorized).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from app.slack.envelope import Envelope, Installation, foreign_reason
from app.slack.web.client import BotIdentity, SlackClient, SlackError
from app.slack.web.errors import AUTH_ERRORS

logger = logging.getLogger(__name__)

OK, UNREACHABLE, UNAUTHORIZED = "ok", "unreachable", "unauthorized"
MAX_BACKOFF_SECONDS = 60.0  # an unreachable Slack: 1, 2, 4 ... 60 s between tries
AUTH_RETRY_SECONDS = 300.0  # a refused token: a try every 5 minutes, in case it was fixed
CHECK_SECONDS = 900.0  # once known, the token is checked again this often (revoked meanwhile?)


# Whether to stop calling Slack (anything true: the workspace is gone).
Stop = Callable[[], Awaitable[object]]


class Authored(Protocol):
    """Anything with an author: a stored message, a message from Slack."""

    user_id: str | None
    bot_id: str | None


@dataclass(frozen=True)
class Me:
    """tomo's own ids, to tell its messages from everyone else's."""

    user_id: str | None
    bot_id: str | None

    def wrote(self, message: Authored) -> bool:
        return bool(
            (self.user_id and message.user_id == self.user_id)
            or (self.bot_id and message.bot_id == self.bot_id)
        )


class Identity:
    def __init__(self) -> None:
        self.user_id: str | None = None
        self.bot_id: str | None = None
        self.team_id: str | None = None
        self.enterprise_id: str | None = None
        self.app_id: str | None = None
        # The workspace's address as auth.test answers it (messages' permalinks start with it).
        self.url: str | None = None
        self.known = asyncio.Event()
        self._installation = Installation(bot_user_id=None, team_id=None)
        # Slack has not answered auth.test yet: not reached, as far as anyone here knows.
        self.slack: str = UNREACHABLE
        self.slack_error: str | None = None
        self.auth_retry_seconds = AUTH_RETRY_SECONDS
        self.check_seconds = CHECK_SECONDS
        # Called when Slack takes the token again after refusing it (what waited is owed).
        self.on_authorized: Callable[[], None] = lambda: None

    @property
    def refused(self) -> bool:
        """Whether Slack refuses the bot token, as far as this process knows: what needs
        Slack waits until it takes the token again."""
        return self.slack == UNAUTHORIZED

    def gone(self, reason: str) -> None:
        """The app was uninstalled (or its bot token revoked): the token is refused from now
        on, without asking Slack."""
        self.slack, self.slack_error = UNAUTHORIZED, reason

    def know(
        self,
        *,
        user_id: str,
        bot_id: str | None,
        team_id: str | None,
        enterprise_id: str | None = None,
        app_id: str | None = None,
        url: str | None = None,
    ) -> None:
        self.user_id, self.bot_id, self.team_id = user_id, bot_id, team_id
        self.enterprise_id, self.app_id = enterprise_id, app_id
        self.url = url or self.url
        self._installation = Installation(user_id, team_id, enterprise_id, app_id)
        self.known.set()

    def foreign(self, envelope: Envelope) -> str | None:
        """Why an event is for another app or workspace, or None when it is tomo's (no I/O)."""
        return foreign_reason(envelope, self._installation)

    def know_from_event(self, envelope: Envelope) -> None:
        """Until auth.test has answered, take the bot user id from an event's authorizations,
        so a mention that arrives first as a plain `message` (with `<@bot>` in its text) is
        still a mention. auth.test's answer, when it comes, replaces this (and adds bot_id)."""
        if self.known.is_set():
            return
        learned = envelope.bot()
        if learned is not None:
            self.know(user_id=learned[0], bot_id=None, team_id=learned[1])
            logger.info(
                "bot user id %s taken from an event (auth.test has not answered)", learned[0]
            )

    def snapshot(self) -> dict[str, str | None]:
        """Who tomo is, for the job worker (which learns it from its parent, not Slack)."""
        return {
            "user_id": self.user_id,
            "bot_id": self.bot_id,
            "team_id": self.team_id,
            "url": self.url,
        }

    def me(self) -> Me:
        return Me(user_id=self.user_id, bot_id=self.bot_id)

    async def learn(
        self, slack: SlackClient, *, first_delay: float = 1.0, stop: Stop | None = None
    ) -> None:
        """Call auth.test until it succeeds: an unreachable Slack is retried with a backoff up
        to a minute, a refused token every `auth_retry_seconds` (logged once, as an ERROR
        saying what to do); given up when `stop` says so (the app was uninstalled)."""
        delay = first_delay
        while True:
            if stop is not None and await stop():
                logger.info("auth.test no longer tried: the workspace is gone")
                return
            try:
                bot = await slack.auth_test()
            except SlackError as error:
                if error.error in AUTH_ERRORS:
                    self._refused(error)
                    await asyncio.sleep(self.auth_retry_seconds)
                    continue
                self.slack, self.slack_error = UNREACHABLE, str(error)
                logger.warning("auth.test failed, retrying in %.0f s: %s", delay, error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_SECONDS)
                continue
            if self.slack_error is not None:
                logger.info(
                    "Slack answers auth.test again (was %s: %s)", self.slack, self.slack_error
                )
            app_id = bot.app_id or self.app_id or await self._app_id(slack, bot)
            if (bot.user_id, bot.bot_id, bot.team_id, app_id) != (
                self.user_id,
                self.bot_id,
                self.team_id,
                self.app_id,
            ):
                logger.info(
                    "bot user id %s (bot id %s, team %s, app %s)",
                    bot.user_id,
                    bot.bot_id,
                    bot.team_id,
                    app_id,
                )
            self.know(
                user_id=bot.user_id,
                bot_id=bot.bot_id,
                team_id=bot.team_id,
                enterprise_id=bot.enterprise_id,
                app_id=app_id,
                url=bot.url,
            )
            # Only now: /healthz never says "ok" with the bot's id still unknown (bots.info,
            # awaited above, can take a while).
            was_refused = self.refused
            self.slack, self.slack_error = OK, None
            if was_refused:
                self.on_authorized()
            return

    async def watch(self, slack: SlackClient, *, stop: Stop | None = None) -> None:
        """Once known, check the token every `check_seconds`: one revoked meanwhile, or a Slack
        gone, shows in /healthz (and is retried as at start-up until Slack takes it again);
        until `stop` says the workspace is gone."""
        while True:
            await asyncio.sleep(self.check_seconds)
            if stop is not None and await stop():
                logger.info("the bot token is no longer checked: the workspace is gone")
                return
            await self.learn(slack, stop=stop)

    def _refused(self, error: SlackError) -> None:
        if (self.slack, self.slack_error) != (UNAUTHORIZED, error.error):
            logger.error(
                "Slack refuses the bot token (%s): SLACK_BOT_TOKEN is wrong, revoked, or its app "
                "was uninstalled. Copy the Bot User OAuth Token (xoxb-..., Slack app > OAuth & "
                "Permissions; reinstall the app to the workspace if it is gone) into "
                "SLACK_BOT_TOKEN and restart tomo. /healthz says slack: unauthorized meanwhile; "
                "auth.test is tried again every %.0f s.",
                error.error,
                self.auth_retry_seconds,
            )
        else:
            logger.debug("auth.test still refused (%s)", error.error)
        self.slack, self.slack_error = UNAUTHORIZED, error.error

    async def _app_id(self, slack: SlackClient, bot: BotIdentity) -> str | None:
        """The app's id from bots.info, when auth.test did not name it (without it, events
        of another app are still told apart by their authorizations)."""
        if not bot.bot_id:
            return None
        try:
            info = await slack.bot_info(bot.bot_id)
        except SlackError as error:
            logger.warning("bots.info failed; the app id stays unknown: %s", error)
            return None
        app_id = info.get("app_id")
        return app_id if isinstance(app_id, str) and app_id else None
