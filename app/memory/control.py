"""Memory people can see and erase (docs/how-tomo-works.md#tomo): `/tomo memory` and `/tomo forget`.

Forgetting a channel deletes its memories, thread summaries, the notes written in it
(app.memory.notebook) and the calls asked for a person's approval there, and stores the moment
(`channel_control.forgotten_at`): the memory job then reads only that channel's messages
written after it, so nothing older feeds its memories again. The workspace memories are written
from the channel memories, so they are deleted too and written again without it (from scratch,
never folding the old text).

A memory pass already under way when a channel is forgotten must not write back what it read
before. Each pass reads the forget records first (`forget_records`), and each of its writes
checks in the same statement that they are still current (`unchanged`); forgetting and those
writes take turns (`take_turns`: an advisory lock on PostgreSQL, where a statement's snapshot
could otherwise miss a forget committed while it ran; SQLite writes one at a time anyway).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, func, literal, or_, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import ChannelControl, Memory, Note
from app.db.models.mcp import McpApproval
from app.memory.notebook import written_in

FORGET_LOCK_KEY = 0x746F6D6F  # the advisory lock's key ("tomo"); any constant would do
THREAD_SUMMARY_LIMIT = 20  # thread summaries `/tomo memory` shows at most


@dataclass(frozen=True)
class Forgotten:
    channel: str
    at: float
    memories: int  # channel memories and thread summaries deleted
    notes: int = 0  # notes written in the channel, deleted
    approvals: int = 0  # calls asked for approval in the channel (their arguments), deleted


def of_channel(channel: str) -> ColumnElement[bool]:
    return or_(
        (col(Memory.scope) == "channel") & (col(Memory.scope_id) == channel),
        (col(Memory.scope) == "thread")
        & col(Memory.scope_id).startswith(f"{channel}:", autoescape=True),
    )


async def take_turns(connection: AsyncConnection) -> None:
    """Hold the forget lock to the end of this transaction (PostgreSQL; a no-op on SQLite)."""
    if connection.dialect.name == "postgresql":
        await connection.execute(
            text("SELECT pg_advisory_xact_lock(:key)"), {"key": FORGET_LOCK_KEY}
        )


async def forget_channel(
    engine: AsyncEngine, *, channel: str, user: str, now: float | None = None
) -> Forgotten:
    """Delete the channel's memories and thread summaries, the workspace memories built from
    them, the notes written in the channel and the calls asked for approval there (their
    arguments are what people wrote; their timers are the caller's to cancel); record the
    moment."""
    moment = time.time() if now is None else now
    record = upsert(engine.dialect.name, ChannelControl).values(
        channel=channel,
        mode="normal",
        quiet_until=None,
        changed_by="",
        changed_at=0.0,
        forgotten_at=moment,
        forgotten_by=user,
    )
    record = record.on_conflict_do_update(
        index_elements=["channel"], set_={"forgotten_at": moment, "forgotten_by": user}
    )
    async with engine.begin() as connection:
        await take_turns(connection)
        await connection.execute(record)
        deleted = await connection.execute(delete(Memory).where(of_channel(channel)))
        await connection.execute(delete(Memory).where(col(Memory.scope) == "workspace"))
        notes = await connection.execute(delete(Note).where(written_in(channel)))
        approvals = await connection.execute(
            delete(McpApproval).where(col(McpApproval.channel) == channel)
        )
    return Forgotten(
        channel=channel,
        at=moment,
        memories=int(deleted.rowcount or 0),
        notes=int(notes.rowcount or 0),
        approvals=int(approvals.rowcount or 0),
    )


async def forget_records(connection: AsyncConnection) -> dict[str, float]:
    """channel id -> when its memories were last forgotten."""
    rows = await connection.execute(
        select(col(ChannelControl.channel), col(ChannelControl.forgotten_at)).where(
            col(ChannelControl.forgotten_at).is_not(None)
        )
    )
    return {row[0]: float(row[1] or 0.0) for row in rows.all()}


def channel_of(scope: str, scope_id: str) -> str | None:
    """The channel a memory is about (None for the workspace's)."""
    if scope == "workspace":
        return None
    return scope_id.split(":", 1)[0]


def unchanged(*, scope: str, scope_id: str, records: dict[str, float]) -> ColumnElement[bool]:
    """SQL: no forget that concerns this memory happened since `records` were read."""
    forgotten_at = col(ChannelControl.forgotten_at)
    channel = channel_of(scope, scope_id)
    if channel is None:  # the workspace's memories are made of every channel's
        newest = select(func.max(forgotten_at)).scalar_subquery()
        return func.coalesce(newest, 0.0) == literal(max(records.values(), default=0.0))
    current = select(forgotten_at).where(col(ChannelControl.channel) == channel)
    return func.coalesce(current.scalar_subquery(), 0.0) == literal(records.get(channel, 0.0))


async def remembered(connection: AsyncConnection, channel: str) -> list[Memory]:
    """The channel's memories (long-term, short-term), then its thread summaries, newest
    first."""
    rows = await connection.execute(
        select(Memory.__table__)  # type: ignore[attr-defined]
        .where(of_channel(channel))
        .order_by(col(Memory.scope), col(Memory.source_ts).desc())
        .limit(THREAD_SUMMARY_LIMIT + 2)
    )
    memories = [Memory.model_validate(dict(row)) for row in rows.mappings().all()]
    order = {"long_term": 0, "short_term": 1}
    return sorted(memories, key=lambda m: (m.scope != "channel", order.get(m.kind, 2)))
