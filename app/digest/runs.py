"""Claims on posting a digest (`digest_run`), as reply claims are for replies
(app.conversation.claims): a channel's due time is claimed by inserting its row, and the unique
key makes a second claim fail whatever retries, restarts or instances.

A claim ends `posted`, `empty` (no message from people in the period: nothing posted, no model
call) or `failed` (the model could not write it). `interrupted` is owed still and may be taken
over: a claim left `claimed` by a process that stopped (at start-up), by an instance that died
(the fleet's stalled-job check), or cut short by a stop. The text is stored before the first
post, so a claim taken over looks its posts up in Slack first (app.digest.posting).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.models import DigestRun


class RunStatus(StrEnum):
    CLAIMED = "claimed"
    POSTED = "posted"
    EMPTY = "empty"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


DONE = frozenset({RunStatus.POSTED, RunStatus.EMPTY, RunStatus.FAILED})


@dataclass(frozen=True)
class Run:
    id: int
    channel: str
    due_at: float
    since: float
    until: float
    created_at: float
    chunks: list[str] | None = None  # stored before posting: some may be in Slack already
    taken_over: bool = False


@dataclass(frozen=True)
class Held:
    """The claim is someone else's: running now (`busy`), or done (`status`)."""

    status: RunStatus


def _run(row: DigestRun, *, taken_over: bool) -> Run:
    assert row.id is not None
    chunks = json.loads(row.chunks) if row.chunks else None
    return Run(
        id=row.id,
        channel=row.channel,
        due_at=row.due_at,
        since=row.since,
        until=row.until,
        created_at=row.created_at,
        chunks=[str(c) for c in chunks] if isinstance(chunks, list) else None,
        taken_over=taken_over,
    )


async def claim(
    engine: AsyncEngine, *, channel: str, due_at: float, since: float, until: float
) -> Run | Held:
    """A new claim on the digest due at `due_at`, an interrupted one taken over, or Held."""
    now = time.time()
    row = {
        "channel": channel,
        "due_at": due_at,
        "status": RunStatus.CLAIMED.value,
        "since": since,
        "until": until,
        "messages": 0,
        "created_at": now,
    }
    where = (col(DigestRun.channel) == channel, col(DigestRun.due_at) == due_at)
    try:
        async with engine.begin() as connection:
            await connection.execute(insert(DigestRun).values(row))
            found = await connection.execute(select(DigestRun).where(*where))
            return _run(DigestRun.model_validate(found.one()._mapping), taken_over=False)
    except IntegrityError:
        pass
    async with engine.begin() as connection:
        taken = await connection.execute(
            update(DigestRun)
            .where(*where, col(DigestRun.status) == RunStatus.INTERRUPTED.value)
            .values(status=RunStatus.CLAIMED.value)
        )
        again = (await connection.execute(select(DigestRun).where(*where))).one()
    stored = DigestRun.model_validate(again._mapping)
    if taken.rowcount == 1:
        return _run(stored, taken_over=True)
    return Held(RunStatus(stored.status))


async def store_chunks(engine: AsyncEngine, run: Run, chunks: list[str], *, messages: int) -> None:
    async with engine.begin() as connection:
        await connection.execute(
            update(DigestRun)
            .where(col(DigestRun.id) == run.id)
            .values(chunks=json.dumps(chunks, ensure_ascii=False), messages=messages)
        )


async def finish(
    connection: AsyncConnection,
    run: Run,
    *,
    status: RunStatus,
    posted_ts: str | None = None,
    error: str | None = None,
    messages: int | None = None,
) -> None:
    values: dict[str, object] = {"status": status.value, "finished_at": time.time()}
    values |= {"posted_ts": posted_ts} if posted_ts else {}
    values |= {"error": error[:500]} if error else {}
    values |= {"messages": messages} if messages is not None else {}
    await connection.execute(update(DigestRun).where(col(DigestRun.id) == run.id).values(**values))


async def release(engine: AsyncEngine, run: Run) -> None:
    """Work on the claim stopped (a stop, a Slack or database error): owed again."""
    async with engine.begin() as connection:
        await connection.execute(
            update(DigestRun)
            .where(col(DigestRun.id) == run.id, col(DigestRun.status) == RunStatus.CLAIMED.value)
            .values(status=RunStatus.INTERRUPTED.value)
        )


@contextlib.asynccontextmanager
async def held(engine: AsyncEngine, run: Run) -> AsyncIterator[None]:
    """Work on a claim: whatever exception ends it, the claim is left owed, not `claimed`."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(Exception):
            await asyncio.shield(release(engine, run))  # a cancelled job still lets go
        raise


async def interrupt_unfinished(connection: AsyncConnection, *, keep: set[str]) -> int:
    """At start-up: claims left `claimed` by a stopped process are owed again, except those
    of the channels in `keep`, whose digest runs now (another instance's)."""
    leftover = [col(DigestRun.status) == RunStatus.CLAIMED.value]
    if keep:
        leftover.append(col(DigestRun.channel).not_in(sorted(keep)))
    result = await connection.execute(
        update(DigestRun).where(*leftover).values(status=RunStatus.INTERRUPTED.value)
    )
    return int(result.rowcount or 0)


async def interrupt(engine: AsyncEngine, *, channel: str) -> int:
    """The channel's claims still `claimed` by a job whose instance died: owed again."""
    async with engine.begin() as connection:
        result = await connection.execute(
            update(DigestRun)
            .where(
                col(DigestRun.channel) == channel,
                col(DigestRun.status) == RunStatus.CLAIMED.value,
            )
            .values(status=RunStatus.INTERRUPTED.value)
        )
        return int(result.rowcount or 0)


async def expire(connection: AsyncConnection, *, before: float) -> None:
    """Claims (and the digests' text they hold) older than the retention go."""
    await connection.execute(delete(DigestRun).where(col(DigestRun.created_at) < before))
