"""Building each reply's scope (app.gate.scope) from where it goes and for whom."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.models import Channel
from app.gate.rules import to_show
from app.gate.scope import Scope
from app.slack.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

# How long a person's private memberships are trusted before Slack is asked again.
MEMBERSHIP_SECONDS = 60.0


class Reader(Protocol):
    """Where the reply goes, and whom it answers (app.tools.base.Asker)."""

    @property
    def channel(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...


class Scopes:
    """Builds the scope of each reply, keeping each person's memberships for a minute."""

    def __init__(self, *, engine: AsyncEngine, slack: SlackClient) -> None:
        self._engine = engine
        self._slack = slack
        self._memberships: dict[str, tuple[float, frozenset[str]]] = {}

    async def for_asker(self, asker: Reader) -> Scope:
        kind, forgotten = await self._kind(asker.channel)
        here = asker.channel
        if kind == "public":
            return Scope(conversation=here, private=frozenset(), forgotten=forgotten)
        if kind == "dm" and asker.user_id:
            theirs = await self._private_of(asker.user_id)
            return Scope(conversation=here, private=theirs | {here}, forgotten=forgotten)
        return Scope(conversation=here, private=frozenset({here}), forgotten=forgotten)

    async def _kind(self, channel: str) -> tuple[str, Mapping[str, float]]:
        """`public`, `dm` or `private` (a private channel, a group DM, or unknown), and the
        channels forgotten (the gate's facts)."""
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(
                    select(col(Channel.is_private), col(Channel.is_im)).where(
                        col(Channel.id) == channel
                    )
                )
            ).first()
            forgotten = (await to_show(connection)).forgotten
        if (row is not None and row.is_im) or (row is None and channel.startswith("D")):
            return "dm", forgotten
        if row is not None and not row.is_private:
            return "public", forgotten
        return "private", forgotten

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
