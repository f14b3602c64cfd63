"""Who may see what: the one rule every tool that shows stored words goes through.

A reply is read by everyone in the conversation it is posted in, so it may show only what all
of them can read themselves:
- in a public channel: public channels' messages;
- in a private channel or a group DM: public channels, and that conversation;
- in a DM with one person: public channels, that DM, and the private channels and group DMs
  that person is a member of (asked of Slack, cached briefly).
Never another person's DM. A conversation tomo knows nothing of counts as private. What the
model asks for changes none of this: the scope comes from where the reply goes.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, false, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.models import Channel
from app.retention.batches import table_of
from app.slack.client import SlackClient, SlackError
from app.tools.base import Asker

logger = logging.getLogger(__name__)

# How long a person's private memberships are trusted before Slack is asked again.
MEMBERSHIP_SECONDS = 60.0


@dataclass(frozen=True)
class Scope:
    """What a reply posted in `conversation` may show: any public channel's messages, and the
    non-public conversations in `private`."""

    conversation: str
    private: frozenset[str]

    def allows(self, channel: str, *, public: bool) -> bool:
        return public or channel in self.private

    def where(self, channel_column: Any) -> ColumnElement[bool]:
        """The same rule as a SQL condition on a column holding a conversation id: a public
        channel tomo knows (a Channel row neither private nor a DM), or one of `private`."""
        channels = table_of(Channel).c
        public = select(channels.id).where(
            channels.is_private == false(), channels.is_im == false()
        )
        allowed = [channel_column.in_(public)]
        if self.private:
            allowed.append(channel_column.in_(sorted(self.private)))
        return or_(*allowed)


class Scopes:
    """Builds the scope of each reply, keeping each person's memberships for a minute."""

    def __init__(self, *, engine: AsyncEngine, slack: SlackClient) -> None:
        self._engine = engine
        self._slack = slack
        self._memberships: dict[str, tuple[float, frozenset[str]]] = {}

    async def for_asker(self, asker: Asker) -> Scope:
        kind = await self._kind(asker.channel)
        if kind == "public":
            return Scope(conversation=asker.channel, private=frozenset())
        if kind == "dm" and asker.user_id:
            theirs = await self._private_of(asker.user_id)
            return Scope(conversation=asker.channel, private=theirs | {asker.channel})
        return Scope(conversation=asker.channel, private=frozenset({asker.channel}))

    async def _kind(self, channel: str) -> str:
        """`public`, `dm` or `private` (a private channel, a group DM, or unknown)."""
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(
                    select(col(Channel.is_private), col(Channel.is_im)).where(
                        col(Channel.id) == channel
                    )
                )
            ).first()
        if (row is not None and row.is_im) or (row is None and channel.startswith("D")):
            return "dm"
        if row is not None and not row.is_private:
            return "public"
        return "private"

    async def _private_of(self, user_id: str) -> frozenset[str]:
        """The private channels and group DMs (never DMs) the person shares with tomo; none
        when Slack cannot say (a reply then shows less, never more)."""
        now = time.monotonic()
        kept = self._memberships.get(user_id)
        if kept is not None and now - kept[0] < MEMBERSHIP_SECONDS:
            return kept[1]
        try:
            found = await self._slack.private_conversations_of(user_id)
        except SlackError as error:
            logger.warning("could not learn %s's private conversations: %s", user_id, error)
            return frozenset()
        theirs = frozenset(str(c["id"]) for c in found if c.get("id") and not c.get("is_im"))
        self._memberships[user_id] = (now, theirs)
        return theirs
