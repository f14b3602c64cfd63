"""Ending a claim, or letting it go (docs/how-tomo-works.md#reply).

Before its first post a claim stores what it will post (`store_chunks`); it ends `posted` or
`failed` (`settle`, which counts the reply). Work that stops on an exception lets the claim go
(`held`, `release`): a cancellation leaves it `interrupted`, a failure once its messages were
stored leaves it `uncertain` (owed still: app.conversation.claims.status). A claim left
`claimed` by a process that stopped is interrupted at the next start (`interrupt_unfinished`)
or when its job is handed back (`interrupt`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from sqlalchemy import case, tuple_, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession

from app.conversation.claims.status import ReplyStatus
from app.conversation.claims.taking import Claim
from app.db.models import Reply
from app.observability.metrics import count_reply


async def store_chunks(
    engine: AsyncEngine, claim_id: int, chunks: list[str], *, error: str | None = None
) -> None:
    """Before the first post: what is about to be posted (and, for an apology, why)."""
    stored = json.dumps({"messages": chunks, "model_failure": error}, ensure_ascii=False)
    async with engine.begin() as connection:
        await connection.execute(
            update(Reply).where(col(Reply.id) == claim_id).values(chunks=stored, error=error)
        )


async def finish(
    engine: AsyncEngine,
    claim_id: int,
    *,
    status: ReplyStatus,
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


async def settle(
    engine: AsyncEngine,
    claim: Claim,
    *,
    status: ReplyStatus,
    error: str | None = None,
    posted: list[str] | None = None,
) -> None:
    """`finish`, and the reply counted by why and how it ended (app.observability.metrics)."""
    await finish(engine, claim.id, status=status, error=error, posted=posted)
    count_reply(
        reason=claim.reason.value, outcome=status, trigger_ts=claim.trigger_ts, posted=bool(posted)
    )


async def release(engine: AsyncEngine, claim_id: int, *, cancelled: bool, error: str) -> None:
    """A claim whose work stopped on an exception: a cancellation (tomo stopping) leaves it
    owed as `interrupted`; a failure ends it `failed`, or leaves it `uncertain` (looked up
    before anything is posted again) once its messages were stored, as posting may have begun."""
    owed_as = (
        ReplyStatus.INTERRUPTED
        if cancelled
        else case((col(Reply.chunks).is_not(None), ReplyStatus.UNCERTAIN), else_=ReplyStatus.FAILED)
    )
    async with engine.begin() as connection:
        await connection.execute(
            update(Reply)
            .where(col(Reply.id) == claim_id, col(Reply.status) == ReplyStatus.CLAIMED)
            .values(status=owed_as, error=error[:500])
        )


_releasing: set[asyncio.Task[None]] = set()


@contextlib.asynccontextmanager
async def held(
    engine: AsyncEngine,
    claim_id: int,
    *,
    in_flight: Callable[[], asyncio.Future[Any] | None] = lambda: None,
) -> AsyncIterator[None]:
    """Work on a claim: whatever exception ends it, the claim is not left `claimed`. While a
    post is still on its way to Slack (`in_flight`, shielded from the cancellation), the
    claim stays taken until that post has settled, so no other job takes it over meanwhile:
    the job ends once the post has settled and the claim is let go, so a job handed back
    to the queue finds its claim owed (a second cancellation leaves the release to the
    post's end). If the process ends first, the next start finds it `claimed` and interrupts
    it."""
    try:
        yield
    except BaseException as error:
        cancelled = isinstance(error, asyncio.CancelledError)
        reason = f"{type(error).__name__}: {error}"

        def releasing() -> Coroutine[Any, Any, None]:
            return release(engine, claim_id, cancelled=cancelled, error=reason)

        post = in_flight()
        if post is not None and not post.done():
            try:
                await asyncio.wait({post})
            except asyncio.CancelledError:
                post.add_done_callback(lambda _post: _in_background(releasing()))
                raise
        await asyncio.shield(releasing())  # a cancelled job still records that it stopped
        raise


def _in_background(work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.get_running_loop().create_task(work)
    _releasing.add(task)
    task.add_done_callback(_releasing.discard)


async def interrupt_unfinished(session: AsyncSession, *, keep: set[tuple[str, str]]) -> int:
    """At start-up: claims left `claimed` by a stopped process are interrupted; those of the
    conversations in `keep` (channel, thread_ts), whose reply runs now, are not."""
    connection = await session.connection()
    leftover = [col(Reply.status) == ReplyStatus.CLAIMED]
    if keep:
        leftover.append(tuple_(col(Reply.channel), col(Reply.thread_ts)).not_in(list(keep)))
    result = await connection.execute(
        update(Reply).where(*leftover).values(status=ReplyStatus.INTERRUPTED)
    )
    await session.commit()
    return int(result.rowcount or 0)


async def interrupt(engine: AsyncEngine, *, channel: str, thread_ts: str) -> int:
    """The conversation's claims still `claimed` by a job whose process died: owed again."""
    async with engine.begin() as connection:
        result = await connection.execute(
            update(Reply)
            .where(
                col(Reply.status) == ReplyStatus.CLAIMED,
                col(Reply.channel) == channel,
                col(Reply.thread_ts) == thread_ts,
            )
            .values(status=ReplyStatus.INTERRUPTED)
        )
        return int(result.rowcount or 0)
