"""Building each reply's scope (app.gate.scope) from where it goes and for whom, as Slack says
now: the conversation's kind is read from the database, where the events that change it are
written as they are recorded (app.db.conversation_facts); what this process learnt from Slack
of a person's memberships is asked again once a membership event was recorded after it, by
any process."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.models import Channel, ConversationChange
from app.gate.rules import to_show
from app.gate.scope import Scope
from app.slack.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

# How long a person's memberships are trusted before Slack is asked again (unless a
# membership event came meanwhile).
MEMBERSHIP_SECONDS = 60.0


class Reader(Protocol):
    """Where the reply goes, and whom it answers (app.tools.base.Asker)."""

    @property
    def channel(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...


@dataclass(frozen=True)
class Here:
    """What the database says of the conversation a reply goes to, now."""

    kind: str  # public, dm, private (a private channel, a group DM, or unknown)
    forgotten: Mapping[str, float]  # the gate's forget times
    changed: Mapping[str, float]  # person or conversation id -> last membership change


@dataclass(frozen=True)
class _Kept:
    asked_at: float  # when Slack was asked (time.time())
    conversations: frozenset[str]


class Scopes:
    """Builds the scope of each reply, keeping each person's memberships for a minute at
    most, and not past a membership event."""

    def __init__(self, *, engine: AsyncEngine, slack: SlackClient) -> None:
        self._engine = engine
        self._slack = slack
        self._memberships: dict[str, _Kept] = {}

    async def for_asker(self, asker: Reader) -> Scope:
        here = asker.channel
        found = await self._here(here, [k for k in (asker.user_id, here) if k])
        if found.kind == "public":
            return Scope(conversation=here, private=frozenset(), forgotten=found.forgotten)
        if found.kind == "dm" and asker.user_id:
            since = found.changed.get(asker.user_id, 0.0)
            theirs = await self._private_of(asker.user_id, changed_at=since)
            return Scope(conversation=here, private=theirs | {here}, forgotten=found.forgotten)
        return Scope(conversation=here, private=frozenset({here}), forgotten=found.forgotten)

    async def _here(self, channel: str, keys: list[str]) -> Here:
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(
                    select(col(Channel.is_private), col(Channel.is_im)).where(
                        col(Channel.id) == channel
                    )
                )
            ).first()
            forgotten = (await to_show(connection)).forgotten
            changed = await _changes(connection, keys)
        if (row is not None and row.is_im) or (row is None and channel.startswith("D")):
            kind = "dm"
        elif row is not None and not row.is_private:
            kind = "public"
        else:
            kind = "private"
        return Here(kind=kind, forgotten=forgotten, changed=changed)

    async def _private_of(self, user_id: str, *, changed_at: float) -> frozenset[str]:
        """The private channels and group DMs (never DMs) the person shares with tomo; none
        when Slack cannot say (a reply then shows less, never more)."""
        kept = self._memberships.get(user_id)
        now = time.time()
        if kept is not None and now - kept.asked_at < MEMBERSHIP_SECONDS:
            if kept.asked_at > changed_at:
                return kept.conversations
        try:
            found = await self._slack.private_conversations_of(user_id)
        except SlackError as error:
            logger.warning("could not learn %s's private conversations: %s", user_id, error)
            return frozenset()
        theirs = frozenset(str(c["id"]) for c in found if c.get("id") and not c.get("is_im"))
        self._memberships[user_id] = _Kept(asked_at=now, conversations=theirs)
        return theirs


async def _changes(connection: AsyncConnection, keys: list[str]) -> dict[str, float]:
    """When Slack last told of a membership change of these people or conversations."""
    if not keys:
        return {}
    rows: Any = await connection.execute(
        select(col(ConversationChange.key), col(ConversationChange.changed_at)).where(
            col(ConversationChange.key).in_(keys)
        )
    )
    return {key: float(at) for key, at in rows.all()}
