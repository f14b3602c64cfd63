"""Claims on answering a message (SPEC §3.5: never twice for the same latest message).

A reply first inserts a `reply` row keyed by (channel, thread_ts, trigger_ts); the unique key
makes a second claim on the same message fail, whatever retries, races or processes. A claim
still `claimed` at start-up belongs to a process that stopped before it finished: it becomes
`interrupted`, and only such a claim can be taken over.
"""

from __future__ import annotations

import time

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.models import Reply

CLAIMED = "claimed"
POSTED = "posted"
FAILED = "failed"
INTERRUPTED = "interrupted"
UNFINISHED = frozenset({CLAIMED, INTERRUPTED})


async def claim(
    engine: AsyncEngine, *, channel: str, thread_ts: str, trigger_ts: str, reason: str
) -> int | None:
    """The id of a new claim on answering `trigger_ts`, or None when it is taken."""
    now = time.time()
    row = {
        "channel": channel,
        "thread_ts": thread_ts,
        "trigger_ts": trigger_ts,
        "reason": reason,
        "status": CLAIMED,
        "created_at": now,
    }
    # No RETURNING: on SQLite a statement with RETURNING keeps the write lock until its rows
    # are fetched, a turn of the event loop later (see app.jobs.worker).
    try:
        async with engine.begin() as connection:
            result = await connection.execute(insert(Reply).values(row))
            primary_key = result.inserted_primary_key
            assert primary_key is not None  # a single-row insert always has one
            return int(primary_key[0])
    except IntegrityError:
        pass
    async with engine.begin() as connection:
        taken = await connection.execute(
            update(Reply)
            .where(
                col(Reply.channel) == channel,
                col(Reply.thread_ts) == thread_ts,
                col(Reply.trigger_ts) == trigger_ts,
                col(Reply.status) == INTERRUPTED,
            )
            .values(status=CLAIMED, reason=reason, created_at=now, error=None)
        )
        if taken.rowcount != 1:
            return None
        found = await connection.execute(
            select(col(Reply.id)).where(
                col(Reply.channel) == channel,
                col(Reply.thread_ts) == thread_ts,
                col(Reply.trigger_ts) == trigger_ts,
            )
        )
        return found.scalar_one()


async def finish(
    engine: AsyncEngine,
    claim_id: int,
    *,
    status: str,
    error: str | None = None,
    posted: list[str] | None = None,
) -> None:
    async with engine.begin() as connection:
        await connection.execute(
            update(Reply)
            .where(col(Reply.id) == claim_id)
            .values(
                status=status,
                error=error,
                posted_ts=posted[0] if posted else None,
                posted_at=time.time() if posted else None,
            )
        )


async def interrupt_unfinished(session: AsyncSession) -> int:
    """At start-up (one process): claims left `claimed` by the previous life are interrupted."""
    connection = await session.connection()
    result = await connection.execute(
        update(Reply).where(col(Reply.status) == CLAIMED).values(status=INTERRUPTED)
    )
    await session.commit()
    return int(result.rowcount or 0)
