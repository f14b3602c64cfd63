"""Own-voice limits (docs/how-tomo-works.md: #judgment, #tomo): when tomo may not join a channel's
conversation on its own, checked before any LLM call and again just before a reply is claimed.

- The channel's mode: quiet or mentions-only means no autonomous reply, and no reply to an
  AUTO_REPLY_CHANNELS message that does not mention tomo either.
- AUTONOMOUS_COOLDOWN_SECONDS since tomo last joined the channel on its own.
- MAX_AUTONOMOUS_REPLIES_PER_DAY autonomous replies per channel per 24 h (0: never).

Mentions and DMs are never limited. An autonomous reply is a reply a judgment decided on
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

from sqlalchemy import and_, case, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.conversation.channel_modes import ChannelMode, Mode, read_mode
from app.conversation.claims import FAILED, OWED
from app.db.models import Reply
from app.domain import ReplyReason
from app.prompts import format_time

logger = logging.getLogger(__name__)

AUTONOMOUS = ReplyReason.JUDGMENT  # a reply tomo decided on by itself
DAY_SECONDS = 86400.0
WITHHELD = "withheld"  # the reply status of a reply the limits stopped
NOT_SPOKEN = (FAILED, WITHHELD)  # statuses of claims that posted nothing (unless posted_ts)


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


class OwnVoice:
    def __init__(self, *, engine: AsyncEngine, cooldown: float, daily_cap: int) -> None:
        self._engine = engine
        self.cooldown = cooldown
        self.daily_cap = daily_cap
        self._turns: dict[str, asyncio.Lock] = {}

    async def mode(self, channel: str, *, now: float | None = None) -> ChannelMode:
        async with self._engine.connect() as connection:
            return await read_mode(connection, channel, now=now)

    async def activity(self, channel: str, *, now: float | None = None) -> Activity:
        moment = time.time() if now is None else now
        spoke = or_(col(Reply.status).not_in(NOT_SPOKEN), col(Reply.posted_ts).is_not(None))
        joined = func.coalesce(col(Reply.posted_at), col(Reply.created_at))
        today = case((col(Reply.created_at) >= moment - DAY_SECONDS, 1))
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(
                    select(func.max(joined), func.count(today)).where(
                        and_(col(Reply.channel) == channel, col(Reply.reason) == AUTONOMOUS, spoke)
                    )
                )
            ).one()
        return Activity(
            last_joined_at=float(row[0]) if row[0] is not None else None,
            replies_today=int(row[1] or 0),
        )

    async def limit(
        self, channel: str, *, reason: ReplyReason = AUTONOMOUS, now: float | None = None
    ) -> str | None:
        """Why tomo may not speak in `channel` now for a reply of this `reason` (`judgment`:
        every limit; `auto_reply`: the mode only; mentions and DMs: none), or None."""
        if not reason.limited:
            return None
        moment = time.time() if now is None else now
        held = mode_limit(await self.mode(channel, now=moment))
        if held is not None or reason != AUTONOMOUS:
            return held
        if self.daily_cap == 0:
            return "own-voice limit: MAX_AUTONOMOUS_REPLIES_PER_DAY is 0 (never join on its own)"
        activity = await self.activity(channel, now=moment)
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
    ) -> AsyncIterator[bool]:
        """Whether a reply may be claimed now; the reply claims inside this block, so two
        replies in one channel never both pass the limits. A reply that may not is recorded
        as withheld."""
        if not reason.limited:
            yield True
            return
        lock = self._turns.setdefault(channel, asyncio.Lock())
        async with lock:
            held = await self.limit(channel, reason=reason)
            if held is not None:
                logger.info("reply withheld: %s", held)
                await self._withhold(channel, thread_ts, trigger_ts, reason=reason, limit=held)
            yield held is None

    async def _withhold(
        self, channel: str, thread_ts: str, trigger_ts: str, *, reason: ReplyReason, limit: str
    ) -> None:
        row = {
            "channel": channel,
            "thread_ts": thread_ts,
            "trigger_ts": trigger_ts,
            "reason": reason,
            "status": WITHHELD,
            "error": limit,
            "created_at": time.time(),
        }
        try:
            async with self._engine.begin() as connection:
                await connection.execute(insert(Reply).values(row))
        except IntegrityError:
            # Claimed or withheld already; or a claim cut short by a stop before anything was
            # composed, owed still: withheld now, so the next start does not owe it again.
            async with self._engine.begin() as connection:
                await connection.execute(
                    update(Reply)
                    .where(
                        col(Reply.channel) == channel,
                        col(Reply.thread_ts) == thread_ts,
                        col(Reply.trigger_ts) == trigger_ts,
                        col(Reply.status).in_(OWED),
                        col(Reply.chunks).is_(None),
                    )
                    .values(status=WITHHELD, error=limit)
                )
