"""Conversations tomo takes part in (docs/how-tomo-works.md#follow-ups): where a person's message
without a mention is a follow-up, judged within seconds.

A thread (tomo's own post as its parent included): tomo spoke in it within
FOLLOW_UP_WINDOW_SECONDS. A channel's (or group DM's) top level: that post is also among the
last TOP_LEVEL_TURNS turns there (one person's consecutive messages are one turn); once that
many others have spoken since, the channel has moved on. (A DM is answered at once anyway.)

"tomo spoke" is read from its reply claims, which every post of tomo's has (a claim that
posted nothing, failed or withheld, does not count; one being written does, from its claim):
every instance of a fleet sees the same, whichever one posted. This is read on the
acknowledgement's path for every person's message routed to a judgment, so it is one small
indexed read (the reply table's unique key), on the SQLite reader's thread where there is one,
plus the top level's few newest messages only where tomo spoke there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy import and_, func, or_, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.conversation.claims import spoke
from app.db.models import TOP_LEVEL, Message, Reply
from app.domain import ReplyReason, Route, RouteKind
from app.slack.kinds import MessageKind

T = TypeVar("T")

# At a channel's top level: tomo's post is among the last three turns there (a turn: one
# person's consecutive messages). An answer to tomo comes right after it, often as a few
# lines, and may come after one other person's aside; once three others have taken a turn
# since, the channel is on to something else, and taking its talk for talk with tomo would be
# barging in. The newest TOP_LEVEL_SCAN messages are looked at.
TOP_LEVEL_TURNS = 3
TOP_LEVEL_SCAN = 30
# A follow-up is answered in a held-back channel only where a person asked for tomo.
ASKED = (ReplyReason.MENTION.value, ReplyReason.DM.value)

_SPOKE_AT = func.max(func.coalesce(col(Reply.posted_at), col(Reply.created_at)))


@dataclass(frozen=True)
class Joined:
    """A conversation tomo takes part in: where, when it last spoke there, and whether a
    mention or DM began it (else tomo joined it on its own)."""

    channel: str
    thread_ts: str  # "" = the top level
    spoke_at: float
    asked: bool


def _spoke_at(connection: Connection, channel: str, thread_ts: str, since: float) -> float | None:
    """When tomo last spoke in the conversation (a thread's parent included), since `since`."""
    where = col(Reply.thread_ts) == thread_ts
    if thread_ts:  # a reply under tomo's own top-level post
        where = or_(
            where, and_(col(Reply.thread_ts) == TOP_LEVEL, col(Reply.posted_ts) == thread_ts)
        )
    newest = connection.execute(
        select(_SPOKE_AT).where(col(Reply.channel) == channel, where, spoke())
    ).scalar()
    return float(newest) if newest is not None and float(newest) >= since else None


def _among_last_turns(connection: Connection, channel: str, user_id: str) -> bool:
    """Whether tomo's post is among the last TOP_LEVEL_TURNS turns of the top level."""
    recent = connection.execute(
        select(col(Message.user_id), col(Message.bot_id))
        .where(
            col(Message.channel) == channel,
            col(Message.thread_ts) == TOP_LEVEL,
            col(Message.deleted) == False,  # noqa: E712
            col(Message.kind) == MessageKind.CONVERSATIONAL.value,
            col(Message.text) != "",
        )
        .order_by(col(Message.ts).desc())
        .limit(TOP_LEVEL_SCAN)
    )
    turns, speaker = 0, object()
    for row in recent:
        if (row.user_id or row.bot_id) != speaker:
            turns, speaker = turns + 1, row.user_id or row.bot_id
        if turns > TOP_LEVEL_TURNS:
            return False
        if row.user_id == user_id:
            return True
    return False


def taking_part(
    connection: Connection, *, channel: str, thread_ts: str, user_id: str, since: float
) -> float | None:
    """When tomo last spoke in a conversation it takes part in (the rules above), or None."""
    spoke = _spoke_at(connection, channel, thread_ts, since)
    if spoke is None or thread_ts or _among_last_turns(connection, channel, user_id):
        return spoke
    return None


def asked(connection: Connection, *, channel: str, thread_ts: str) -> bool:
    """Whether a mention or a DM began (or joined in) the conversation: a person asked for
    tomo there (tomo's answer to one is a reply claim of that reason)."""
    found = connection.execute(
        select(col(Reply.id))
        .where(
            col(Reply.channel) == channel,
            col(Reply.thread_ts) == thread_ts,
            col(Reply.reason).in_(ASKED),
        )
        .limit(1)
    )
    return found.first() is not None


def _joined(connection: Connection, channel: str, user_id: str, since: float) -> list[Joined]:
    spoken = connection.execute(
        select(col(Reply.thread_ts), _SPOKE_AT)
        .where(col(Reply.channel) == channel, col(Reply.created_at) >= since, spoke())
        .group_by(col(Reply.thread_ts))
    )
    joined = []
    for thread_ts, spoke_at in list(spoken):
        if spoke_at is None or float(spoke_at) < since:
            continue
        if not thread_ts and not _among_last_turns(connection, channel, user_id):
            continue
        began = asked(connection, channel=channel, thread_ts=thread_ts)
        joined.append(Joined(channel, thread_ts, float(spoke_at), began))
    return sorted(joined, key=lambda conversation: conversation.spoke_at, reverse=True)


class Participation:
    def __init__(self, *, engine: AsyncEngine, reader: Engine | None, window: float) -> None:
        """`reader`: a synchronous engine on the same SQLite file (app.db.engine.sqlite_reader),
        whose reads run on a thread, one hop; None: the async engine's connection."""
        self._engine = engine
        self._reader = reader
        self.window = window  # FOLLOW_UP_WINDOW_SECONDS; 0: off

    async def _read(self, work: Callable[[Connection], T]) -> T:
        if self._reader is not None:
            return await asyncio.to_thread(self._read_here, work)
        async with self._engine.connect() as connection:
            return await connection.run_sync(work)

    def _read_here(self, work: Callable[[Connection], T]) -> T:
        assert self._reader is not None
        with self._reader.connect() as connection:
            return work(connection)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.dispose()

    async def route(self, route: Route, *, channel: str, user_id: str | None, now: float) -> Route:
        """A judgment's route, or a follow-up's when tomo takes part in that conversation."""
        if route.kind is not RouteKind.JUDGMENT or self.window <= 0 or not user_id:
            return route
        since = now - self.window
        spoke = await self._read(
            lambda connection: taking_part(
                connection,
                channel=channel,
                thread_ts=route.conversation_ts,
                user_id=user_id,
                since=since,
            )
        )
        return route if spoke is None else Route(RouteKind.FOLLOW_UP, route.conversation_ts)

    async def asked(self, *, channel: str, thread_ts: str) -> bool:
        return await self._read(
            lambda connection: asked(connection, channel=channel, thread_ts=thread_ts)
        )

    async def joined(self, *, channel: str, user_id: str | None, now: float) -> list[Joined]:
        """The conversations of `channel` tomo takes part in now, the most recent first."""
        if self.window <= 0 or not user_id:
            return []
        since = now - self.window
        return await self._read(lambda connection: _joined(connection, channel, user_id, since))
