"""What Slack says of memberships, asked when a reply's scope needs it and kept a minute at
most in this process: the conversations a person is in (users.conversations with `user`),
and the people in a conversation (conversations.members). A membership event recorded since
Slack was asked (`conversation_change`, written by any process: app.db.conversation_facts)
makes it ask again. When Slack cannot say, the answer is None: the scope then shows less."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

# How long an answer is trusted before Slack is asked again (unless a membership event came).
MEMBERSHIP_SECONDS = 60.0


@dataclass(frozen=True)
class _Kept:
    asked_at: float  # when Slack was asked (time.time(): compared with changes' times)
    ids: frozenset[str]


class Memberships:
    def __init__(self, slack: SlackClient) -> None:
        self._slack = slack
        self._kept: dict[tuple[str, str], _Kept] = {}

    async def private_of(self, user_id: str, *, changed_at: float) -> frozenset[str] | None:
        """The private channels and group DMs (never DMs) the person shares with tomo."""
        return await self._ask(("private", user_id), changed_at, self._private, user_id)

    async def channels_of_guest(self, user_id: str, *, changed_at: float) -> frozenset[str] | None:
        """Every channel and group DM a guest is in (public ones too; never DMs)."""
        return await self._ask(("guest", user_id), changed_at, self._guest, user_id)

    async def members_of(self, channel: str, *, changed_at: float) -> frozenset[str] | None:
        """The people in a conversation."""
        return await self._ask(("members", channel), changed_at, self._members, channel)

    async def _ask(
        self,
        key: tuple[str, str],
        changed_at: float,
        ask: Callable[[str], Awaitable[frozenset[str]]],
        of: str,
    ) -> frozenset[str] | None:
        kept = self._kept.get(key)
        now = time.time()
        if kept is not None and now - kept.asked_at < MEMBERSHIP_SECONDS:
            if kept.asked_at > changed_at:
                return kept.ids
        try:
            ids = await ask(of)
        except SlackError as error:
            logger.warning("could not learn the %s of %s: %s", key[0], of, error)
            return None
        self._kept[key] = _Kept(asked_at=now, ids=ids)
        return ids

    async def _private(self, user_id: str) -> frozenset[str]:
        found = await self._slack.private_conversations_of(user_id)
        return frozenset(str(c["id"]) for c in found if c.get("id") and not c.get("is_im"))

    async def _guest(self, user_id: str) -> frozenset[str]:
        found = await self._slack.guest_conversations_of(user_id)
        return frozenset(str(c["id"]) for c in found if c.get("id") and not c.get("is_im"))

    async def _members(self, channel: str) -> frozenset[str]:
        return frozenset(await self._slack.conversation_members(channel))
