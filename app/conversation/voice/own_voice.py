"""Own-voice limits (docs/how-tomo-works.md: #judgment, #tomo): when tomo may not join a channel's
conversation on its own, checked before any LLM call and again just before a reply is claimed.

- The channel's mode: quiet or mentions-only means no autonomous reply, and no reply to an
  AUTO_REPLY_CHANNELS message that does not mention tomo either.
- AUTONOMOUS_COOLDOWN_SECONDS since tomo last joined the channel on its own.
- MAX_AUTONOMOUS_REPLIES_PER_DAY autonomous replies per channel per 24 h (0: never).

Mentions and DMs are never limited; follow-ups only by the mode, in conversations tomo joined
on its own (app.conversation.timing.participation). An autonomous reply is a reply a judgment
decided on
(`reply.reason = "judgment"`); one counts from its claim unless it failed before anything was
posted. A reply the limits stop is recorded as `withheld`, so it is never owed again (a restart
does not bring it back once the limit has passed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial

from sqlalchemy import and_, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.conversation.claims.status import OWED, ReplyStatus, spoke
from app.conversation.claims.taking import insert_guard
from app.conversation.timing.participation import asked
from app.conversation.voice.channel_modes import ChannelMode, Mode, read_mode
from app.db.models import Reply
from app.domain import ReplyReason
from app.templates import format_time

logger = logging.getLogger(__name__)

AUTONOMOUS = ReplyReason.JUDGMENT  # a reply tomo decided on by itself
DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class Activity:
    """How much tomo has joined a channel's conversations on its own."""

    last_joined_at: float | None  # its latest autonomous reply (claimed or posted), ever
    replies_today: int  # autonomous replies in the last 24 h


def mode_limit(mode: ChannelMode) -> str | None:
    if not mode.holds_back:
        return None
    if mode.mode is Mode.MENTIONS_ONLY:
        return "own-voice limit: the channel is mentions-only"
    if mode.quiet_until is None:
        return "own-voice limit: the channel is quiet until changed"
    return f"own-voice limit: the channel is quiet until {format_time(mode.quiet_until)}"


# The advisory lock class of a channel's turn (with the channel's hash as the second key);
# any constant would do ("turn").
TURN_LOCK = 0x7475726E


@dataclass(frozen=True)
class Turn:
    """A reply's turn to speak: whether it may, and the connection to claim on (None: any)."""

    allowed: bool
    connection: AsyncConnection | None = None


class OwnVoice:
    def __init__(self, *, engine: AsyncEngine, cooldown: float, daily_cap: int) -> None:
        self._engine = engine
        self.cooldown = cooldown
        self.daily_cap = daily_cap
        self._turns: dict[str, asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def _connected(self, given: AsyncConnection | None) -> AsyncIterator[AsyncConnection]:
        """The caller's connection (a turn's transaction), or one of our own."""
        if given is not None:
            yield given
            return
        async with self._engine.connect() as connection:
            yield connection

    async def mode(
        self, channel: str, *, now: float | None = None, connection: AsyncConnection | None = None
    ) -> ChannelMode:
        async with self._connected(connection) as reading:
            return await read_mode(reading, channel, now=now)

    async def follow_up_limit(self, channel: str, *, thread_ts: str) -> str | None:
        """Why a follow-up may not be answered: the channel is held back and tomo joined
        this conversation on its own (no mention or DM asked for it there), or None. The
        cooldown and the daily cap never apply to follow-ups."""
        async with self._engine.connect() as connection:
            held = mode_limit(await read_mode(connection, channel))
            began = partial(asked, channel=channel, thread_ts=thread_ts)
            if held is None or await connection.run_sync(began):
                return None
        return f"{held}; tomo joined this conversation on its own"

    async def activity(
        self, channel: str, *, now: float | None = None, connection: AsyncConnection | None = None
    ) -> Activity:
        moment = time.time() if now is None else now
        joined = func.coalesce(col(Reply.posted_at), col(Reply.created_at))
        today = case((col(Reply.created_at) >= moment - DAY_SECONDS, 1))
        async with self._connected(connection) as reading:
            row = (
                await reading.execute(
                    select(func.max(joined), func.count(today)).where(
                        and_(
                            col(Reply.channel) == channel, col(Reply.reason) == AUTONOMOUS, spoke()
                        )
                    )
                )
            ).one()
        return Activity(
            last_joined_at=float(row[0]) if row[0] is not None else None,
            replies_today=int(row[1] or 0),
        )

    async def limit(
        self,
        channel: str,
        *,
        reason: ReplyReason = AUTONOMOUS,
        now: float | None = None,
        connection: AsyncConnection | None = None,
    ) -> str | None:
        """Why tomo may not speak in `channel` now for a reply of this `reason` (`judgment`:
        every limit; `auto_reply`: the mode only; mentions and DMs: none), or None."""
        if not reason.limited:
            return None
        moment = time.time() if now is None else now
        held = mode_limit(await self.mode(channel, now=moment, connection=connection))
        if held is not None or reason != AUTONOMOUS:
            return held
        if self.daily_cap == 0:
            return "own-voice limit: MAX_AUTONOMOUS_REPLIES_PER_DAY is 0 (never join on its own)"
        activity = await self.activity(channel, now=moment, connection=connection)
        if activity.last_joined_at is not None:
            since = moment - activity.last_joined_at
            if since < self.cooldown:
                return (
                    f"own-voice limit: tomo joined this channel on its own {since:.0f} s ago "
                    f"(AUTONOMOUS_COOLDOWN_SECONDS={self.cooldown:g})"
                )
        if activity.replies_today >= self.daily_cap:
            return (
                f"own-voice limit: {activity.replies_today} autonomous replies in this channel "
                f"in the last 24 h (MAX_AUTONOMOUS_REPLIES_PER_DAY={self.daily_cap})"
            )
        return None

    @contextlib.asynccontextmanager
    async def turn(
        self, *, channel: str, thread_ts: str, trigger_ts: str, reason: ReplyReason
    ) -> AsyncIterator[Turn]:
        """Whether a reply may be claimed now. A limited reply claims inside this block, on
        the turn's connection: the limits are read and the claim made in one transaction that
        holds the channel's turn (an asyncio lock in this process; on PostgreSQL also an
        advisory lock for the whole fleet), so two replies in one channel never both pass the
        limits, and no second connection is waited for meanwhile. A reply that may not is
        recorded as withheld."""
        if not reason.limited:
            yield Turn(allowed=True)
            return
        lock = self._turns.setdefault(channel, asyncio.Lock())
        async with lock, self._engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    select(func.pg_advisory_xact_lock(TURN_LOCK, func.hashtext(channel)))
                )
            held = await self.limit(channel, reason=reason, connection=connection)
            if held is not None:
                logger.info("reply withheld: %s", held)
                await self._withhold(
                    connection, channel, thread_ts, trigger_ts, reason=reason, limit=held
                )
            yield Turn(allowed=held is None, connection=connection)

    async def _withhold(
        self,
        connection: AsyncConnection,
        channel: str,
        thread_ts: str,
        trigger_ts: str,
        *,
        reason: ReplyReason,
        limit: str,
    ) -> None:
        row = {
            "channel": channel,
            "thread_ts": thread_ts,
            "trigger_ts": trigger_ts,
            "reason": reason,
            "status": ReplyStatus.WITHHELD,
            "error": limit,
            "created_at": time.time(),
        }
        try:
            async with insert_guard(connection):
                await connection.execute(insert(Reply).values(row))
        except IntegrityError:
            # Claimed or withheld already; or a claim cut short by a stop before anything was
            # composed, owed still: withheld now, so the next start does not owe it again.
            await connection.execute(
                update(Reply)
                .where(
                    col(Reply.channel) == channel,
                    col(Reply.thread_ts) == thread_ts,
                    col(Reply.trigger_ts) == trigger_ts,
                    col(Reply.status).in_(OWED),
                    col(Reply.chunks).is_(None),
                )
                .values(status=ReplyStatus.WITHHELD, error=limit)
            )
