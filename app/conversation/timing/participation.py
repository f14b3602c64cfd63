"""Conversations tomo takes part in (docs/how-tomo-works.md#follow-ups): where a person's message
without a mention is a follow-up, judged within seconds.

A thread (tomo's own post as its parent included): tomo spoke in it within
FOLLOW_UP_WINDOW_SECONDS. A channel's (or group DM's) top level: that post is also among the
last TOP_LEVEL_TURNS turns there (one person's consecutive messages are one turn); once that
many others have spoken since, the channel has moved on. (A DM is answered at once anyway.)

"tomo spoke" is read from its reply claims, which every post of tomo's has (a claim that
posted nothing, failed or withheld, does not count; one being written does, from its claim):
every instance of a fleet sees the same, whichever one posted. This is read on the
acknowledgement's path for every person's message routed to a judgment, in the transaction
that records it, so it is one small indexed read for all the messages acknowledged together
(searches of the reply table's unique key by the conversations asked about, never a scan of
the recent claims: those grow with every mention), one statement compiled once; plus the top
level's few newest messages only where tomo spoke there.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from sqlalchemy import CompoundSelect, bindparam, func, select, union_all
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.conversation.claims.status import spoke
from app.db.dialects import in_listed, read_guard
from app.db.models import TOP_LEVEL, Message, Reply
from app.domain import ReplyReason, Route, RouteKind
from app.recording.deliveries import NewMessage
from app.slack.kinds import MessageKind

T = TypeVar("T")

logger = logging.getLogger(__name__)

# At a channel's top level: tomo's post is among the last three turns there (a turn: one
# person's consecutive messages). An answer to tomo comes right after it, often as a few
# lines, and may come after one other person's aside; once three others have taken a turn
# since, the channel is on to something else, and taking its talk for talk with tomo would be
# barging in. The newest TOP_LEVEL_SCAN messages are looked at.
TOP_LEVEL_TURNS = 3
TOP_LEVEL_SCAN = 30
# Claims older than the window by this much are not read: a reply is posted well within it.
CLAIM_TO_POST_SECONDS = 3600.0
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


@functools.cache
def _spoken_in(dialect: str) -> CompoundSelect:
    """tomo's claims in some conversations: in the threads or top levels asked for (the reply
    table's unique key, channel and thread), and its top-level posts that are the parents of
    the threads asked for. Built once per dialect; its lists are bound when it runs, each as
    one parameter (app.db.dialects.in_listed), so it is compiled once too. The channels and
    threads are matched as two lists, a few pairs more than asked for, which the caller drops."""
    claimed = (
        col(Reply.channel),
        col(Reply.thread_ts),
        col(Reply.posted_ts),
        func.coalesce(col(Reply.posted_at), col(Reply.created_at)),
    )
    channels = in_listed(col(Reply.channel), "channels", dialect)
    recent = col(Reply.created_at) >= bindparam("since")
    return union_all(
        select(*claimed).where(
            channels,
            in_listed(col(Reply.thread_ts), "conversations", dialect),
            recent,
            spoke(),
        ),
        select(*claimed).where(
            channels,
            col(Reply.thread_ts) == TOP_LEVEL,
            in_listed(col(Reply.posted_ts), "threads", dialect),
            recent,
            spoke(),
        ),
    )


def taking_part(
    connection: Connection, *, conversations: Sequence[tuple[str, str]], user_id: str, since: float
) -> list[bool]:
    """For each (channel, thread_ts): whether tomo takes part in it (the rules above). One read
    of tomo's claims in these conversations, whatever their number; then the top level's newest
    messages, once per channel where tomo spoke at its top level."""
    rows = connection.execute(
        _spoken_in(connection.dialect.name),
        {
            "channels": sorted({channel for channel, _ in conversations}),
            "conversations": sorted({thread_ts for _, thread_ts in conversations}),
            "threads": sorted({thread_ts for _, thread_ts in conversations if thread_ts}),
            "since": since - CLAIM_TO_POST_SECONDS,
        },
    )
    spoken: set[tuple[str, str]] = set()
    for channel, thread_ts, posted_ts, spoke_at in rows:
        if spoke_at is None or float(spoke_at) < since:
            continue
        spoken.add((channel, thread_ts))
        if not thread_ts and posted_ts:  # its own top-level post, a thread's parent
            spoken.add((channel, posted_ts))
    turns: dict[str, bool] = {}
    result = []
    for channel, thread_ts in conversations:
        part = (channel, thread_ts) in spoken
        if part and not thread_ts:
            if channel not in turns:
                turns[channel] = _among_last_turns(connection, channel, user_id)
            part = turns[channel]
        result.append(part)
    return result


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
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        reader: Engine | None,
        window: float,
        bot_user: Callable[[], str | None],
    ) -> None:
        """`reader`: a synchronous engine on the same SQLite file (app.db.engine.sqlite_reader),
        whose reads run on a thread, one hop; None: the async engine's connection. `bot_user`:
        tomo's user id, once known."""
        self._engine = engine
        self._reader = reader
        self.window = window  # FOLLOW_UP_WINDOW_SECONDS; 0: off
        self._bot_user = bot_user

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

    def follow_ups(
        self, connection: Connection, messages: Sequence[NewMessage], now: float
    ) -> dict[tuple[str, str], Route]:
        """Which of these messages, about to be stored, are follow-ups: their routes by
        (channel, ts). Run by the recorder in the transaction that stores them
        (app.recording.ingest.write_batch), so the messages acknowledged together share this read,
        and a follow-up is stored as one before it is acknowledged. When the read fails, they
        stay a judgment's (and the transaction goes on: on PostgreSQL, in a savepoint)."""
        user_id = self._bot_user()
        if self.window <= 0 or not user_id:
            return {}
        asking = [new for new in messages if new.route.kind is RouteKind.JUDGMENT]
        if not asking:
            return {}
        keys = [(new.message.channel, new.route.conversation_ts) for new in asking]
        read = partial(taking_part, conversations=keys, user_id=user_id, since=now - self.window)
        try:
            with read_guard(connection):
                found = read(connection)
        except Exception:
            logger.exception("could not tell whether tomo takes part in these conversations")
            return {}
        return {
            (new.message.channel, new.message.ts): Route(
                RouteKind.FOLLOW_UP, new.route.conversation_ts
            )
            for new, part in zip(asking, found, strict=True)
            if part
        }

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
