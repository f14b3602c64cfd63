"""Conversations tomo takes part in (docs/how-tomo-works.md#follow-ups): where a person's message
without a mention is a follow-up, judged within seconds.

A thread (tomo's own post as its parent included): tomo posted in it within
FOLLOW_UP_WINDOW_SECONDS. A channel's (or group DM's) top level: that post is also among the
last TOP_LEVEL_TURNS turns there (one person's consecutive messages are one turn); once that
many others have spoken since, the channel has moved on. (A DM is answered at once anyway.)

Read from the stored messages, so every instance of a fleet sees the same, whichever one
posted. One read per person's message routed to a judgment, on the acknowledgement's path.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.models import TOP_LEVEL, Message, Reply
from app.domain import ReplyReason, Route, RouteKind
from app.slack.kinds import MessageKind

# At a channel's top level: tomo's post is among the last three turns there (a turn: one
# person's consecutive messages). An answer to tomo comes right after it, often as a few
# lines, and may come after one other person's aside; once three others have taken a turn
# since, the channel is on to something else, and taking its talk for talk with tomo would be
# barging in. The newest TOP_LEVEL_SCAN messages are looked at.
TOP_LEVEL_TURNS = 3
TOP_LEVEL_SCAN = 30
# A follow-up is answered in a held-back channel only where a person asked for tomo.
ASKED = (ReplyReason.MENTION.value, ReplyReason.DM.value)


@dataclass(frozen=True)
class Joined:
    """A conversation tomo takes part in: where, since when it last posted, and whether a
    mention or DM began it (else tomo joined it on its own)."""

    channel: str
    thread_ts: str  # "" = the top level
    posted_at: float
    asked: bool


def _mine(user_id: str | None, bot_id: str | None) -> ColumnElement[bool]:
    said = [col(Message.user_id) == user_id] if user_id else []
    said += [col(Message.bot_id) == bot_id] if bot_id else []
    return or_(*said) if said else false()


def _live() -> ColumnElement[bool]:
    return and_(
        col(Message.deleted) == False,  # noqa: E712
        col(Message.kind) == MessageKind.CONVERSATIONAL.value,
        col(Message.text) != "",
    )


async def asked(connection: AsyncConnection, *, channel: str, thread_ts: str) -> bool:
    """Whether a mention or a DM began (or joined in) the conversation: a person asked for
    tomo there (tomo's answer to one is a reply claim of that reason)."""
    found = await connection.execute(
        select(col(Reply.id))
        .where(
            col(Reply.channel) == channel,
            col(Reply.thread_ts) == thread_ts,
            col(Reply.reason).in_(ASKED),
        )
        .limit(1)
    )
    return found.first() is not None


class Participation:
    def __init__(self, *, engine: AsyncEngine, window: float) -> None:
        self._engine = engine
        self.window = window  # FOLLOW_UP_WINDOW_SECONDS; 0: off

    async def route(
        self,
        route: Route,
        *,
        channel: str,
        user_id: str | None,
        bot_id: str | None,
        now: float,
    ) -> Route:
        """A judgment's route, or a follow-up's when tomo takes part in that conversation."""
        if route.kind is not RouteKind.JUDGMENT or self.window <= 0 or not (user_id or bot_id):
            return route
        async with self._engine.connect() as connection:
            posted = await self.posted_at(
                connection,
                channel=channel,
                thread_ts=route.conversation_ts,
                user_id=user_id,
                bot_id=bot_id,
            )
        if posted is None or now - posted > self.window:
            return route
        return Route(RouteKind.FOLLOW_UP, route.conversation_ts)

    async def posted_at(
        self,
        connection: AsyncConnection,
        *,
        channel: str,
        thread_ts: str,
        user_id: str | None,
        bot_id: str | None,
    ) -> float | None:
        """When tomo last posted in the conversation in a way that makes it part of it (the
        top level's rule above), or None."""
        mine = _mine(user_id, bot_id)
        if thread_ts:
            in_thread = and_(
                col(Message.channel) == channel,
                or_(col(Message.thread_ts) == thread_ts, col(Message.ts) == thread_ts),
            )
            found = await connection.execute(
                select(func.max(col(Message.created_at))).where(in_thread, mine, _live())
            )
            newest = found.scalar()
            return float(newest) if newest is not None else None
        recent = await connection.execute(
            select(col(Message.user_id), col(Message.bot_id), col(Message.created_at))
            .where(col(Message.channel) == channel, col(Message.thread_ts) == TOP_LEVEL, _live())
            .order_by(col(Message.ts).desc())
            .limit(TOP_LEVEL_SCAN)
        )
        turns, speaker = 0, object()
        for row in recent:
            if (row.user_id or row.bot_id) != speaker:
                turns, speaker = turns + 1, row.user_id or row.bot_id
            if turns > TOP_LEVEL_TURNS:
                break
            if (user_id and row.user_id == user_id) or (bot_id and row.bot_id == bot_id):
                return float(row.created_at)
        return None

    async def asked(self, *, channel: str, thread_ts: str) -> bool:
        async with self._engine.connect() as connection:
            return await asked(connection, channel=channel, thread_ts=thread_ts)

    async def joined(
        self, *, channel: str, user_id: str | None, bot_id: str | None, now: float
    ) -> list[Joined]:
        """The conversations of `channel` tomo takes part in now, the most recent first."""
        if self.window <= 0 or not (user_id or bot_id):
            return []
        async with self._engine.connect() as connection:
            found = await connection.execute(
                select(col(Message.thread_ts), func.max(col(Message.created_at)))
                .where(
                    col(Message.channel) == channel,
                    col(Message.created_at) >= now - self.window,
                    _mine(user_id, bot_id),
                    _live(),
                )
                .group_by(Message.thread_ts)
            )
            candidates = [(str(row[0]), float(row[1])) for row in found]
            conversations: list[Joined] = []
            for thread_ts, posted in candidates:
                if not thread_ts:  # the top level: only while the rule still holds
                    still = await self.posted_at(
                        connection,
                        channel=channel,
                        thread_ts=TOP_LEVEL,
                        user_id=user_id,
                        bot_id=bot_id,
                    )
                    if still is None:
                        continue
                began = await asked(connection, channel=channel, thread_ts=thread_ts)
                conversations.append(Joined(channel, thread_ts, posted, began))
        return sorted(conversations, key=lambda joined: joined.posted_at, reverse=True)
