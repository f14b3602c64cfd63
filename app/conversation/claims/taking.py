"""Claims on answering a message (docs/how-tomo-works.md#reply).

A reply first inserts a `reply` row keyed by (channel, thread_ts, trigger_ts); the unique key
makes a second claim on the same message fail, whatever retries, races or processes. The
claim stores the messages it will post before it posts the first one.

A claim ends `posted` or `failed`. Two states mean the work is owed still and the claim can
be taken over: `interrupted` (a claim still `claimed` at start-up: its process stopped) and
`uncertain` (Slack may or may not have a post of it). A claim taken over that has its messages
stored may have posted some of them: those are looked up in Slack before any is sent again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, case, insert, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.models import Reply
from app.domain import ReplyReason
from app.observability.metrics import count_reply

CLAIMED = "claimed"
POSTED = "posted"
FAILED = "failed"
INTERRUPTED = "interrupted"
UNCERTAIN = "uncertain"
OWED = frozenset({INTERRUPTED, UNCERTAIN})  # may be taken over
UNFINISHED = frozenset({CLAIMED, *OWED})
WITHHELD = "withheld"  # the own-voice limits stopped it (app.conversation.voice.own_voice)
NOT_SPOKEN = (FAILED, WITHHELD)  # statuses of claims that posted nothing (unless posted_ts)


def spoke() -> ColumnElement[bool]:
    """The claims through which tomo said something (or is saying it now)."""
    # Each status compared on its own: a NOT IN of a list is rendered again on every run.
    said = and_(*(col(Reply.status) != status for status in NOT_SPOKEN))
    return or_(said, col(Reply.posted_ts).is_not(None))


@dataclass(frozen=True)
class Claim:
    id: int
    channel: str
    thread_ts: str
    trigger_ts: str
    reason: ReplyReason
    # The messages stored for posting (None: not composed yet). Set on a claim taken over:
    # some may be in Slack already.
    chunks: list[str] | None = None
    error: str | None = None  # why the model gave no answer (the chunks are the apology)
    # A streamed reply's messages (store_stream): each {"ts": the message's ts, None while
    # its start is unsettled; "text": its first text, then its whole text once complete}.
    stream: list[dict[str, Any]] | None = None


async def claim(
    engine: AsyncEngine,
    *,
    channel: str,
    thread_ts: str,
    trigger_ts: str,
    reason: ReplyReason,
    connection: AsyncConnection | None = None,
) -> Claim | None:
    """A new claim on answering `trigger_ts`, an owed one taken over, or None when taken.
    With `connection` (an own-voice turn's), in its transaction."""
    if connection is not None:
        return await _claim_in(
            connection, channel=channel, thread_ts=thread_ts, trigger_ts=trigger_ts, reason=reason
        )
    async with engine.begin() as own:
        return await _claim_in(
            own, channel=channel, thread_ts=thread_ts, trigger_ts=trigger_ts, reason=reason
        )


async def _claim_in(
    connection: AsyncConnection,
    *,
    channel: str,
    thread_ts: str,
    trigger_ts: str,
    reason: ReplyReason,
) -> Claim | None:
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
    # are fetched, a turn of the event loop later (see app.wiring.worker).
    try:
        async with insert_guard(connection):
            result = await connection.execute(insert(Reply).values(row))
            primary_key = result.inserted_primary_key
            assert primary_key is not None  # a single-row insert always has one
            return Claim(int(primary_key[0]), channel, thread_ts, trigger_ts, reason)
    except IntegrityError:
        pass
    where = (
        col(Reply.channel) == channel,
        col(Reply.thread_ts) == thread_ts,
        col(Reply.trigger_ts) == trigger_ts,
    )
    return await _take(connection, *where)


def insert_guard(connection: AsyncConnection) -> AbstractAsyncContextManager[Any]:
    """Around an insert that may meet the unique key, in a transaction that goes on after it.
    PostgreSQL aborts the whole transaction on a failed statement: a savepoint keeps it.
    SQLite aborts the statement only; a savepoint there would hold its one write lock across
    turns of the event loop, which the web process's commits would wait for (app.wiring.worker)."""
    if connection.dialect.name == "postgresql":
        return connection.begin_nested()
    return contextlib.nullcontext()


async def take_over(engine: AsyncEngine, claim_id: int) -> Claim | None:
    """The owed claim `claim_id`, now this process's; None when it is not owed (any more)."""
    async with engine.begin() as connection:
        return await _take(connection, col(Reply.id) == claim_id)


async def _take(connection: AsyncConnection, *where: object) -> Claim | None:
    taken = await connection.execute(
        update(Reply)
        .where(*where, col(Reply.status).in_(OWED))  # type: ignore[arg-type]
        .values(status=CLAIMED, created_at=time.time())
    )
    if taken.rowcount != 1:
        return None
    found = await connection.execute(select(Reply).where(*where))  # type: ignore[arg-type]
    return _claim_of(Reply.model_validate(found.one()._mapping))


def reason_of(reply: Reply) -> ReplyReason:
    """The stored reason of a reply; one this version does not know is taken for a judgment's,
    which every limit applies to."""
    try:
        return ReplyReason(reply.reason)
    except ValueError:
        return ReplyReason.JUDGMENT


def _claim_of(reply: Reply) -> Claim:
    assert reply.id is not None
    stored = json.loads(reply.chunks) if reply.chunks else {}
    messages = stored.get("messages") if isinstance(stored, dict) else None
    failure = stored.get("model_failure") if isinstance(stored, dict) else None
    streamed = stored.get("stream") if isinstance(stored, dict) else None  # stream_claims
    return Claim(
        reply.id,
        reply.channel,
        reply.thread_ts,
        reply.trigger_ts,
        reason_of(reply),
        chunks=[str(m) for m in messages] if isinstance(messages, list) else None,
        error=str(failure) if failure else None,
        stream=[dict(m) for m in streamed if isinstance(m, dict)] if streamed else None,
    )


async def owed(engine: AsyncEngine, *, channel: str, thread_ts: str) -> list[int]:
    """The conversation's owed claims whose messages were stored: posting may have begun."""
    async with engine.connect() as connection:
        found = await connection.execute(
            select(col(Reply.id))
            .where(
                col(Reply.channel) == channel,
                col(Reply.thread_ts) == thread_ts,
                col(Reply.status).in_(OWED),
                col(Reply.chunks).is_not(None),
            )
            .order_by(col(Reply.id))
        )
        return [int(identifier) for identifier in found.scalars() if identifier is not None]


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


async def settle(
    engine: AsyncEngine,
    claim: Claim,
    *,
    status: str,
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
        INTERRUPTED
        if cancelled
        else case((col(Reply.chunks).is_not(None), UNCERTAIN), else_=FAILED)
    )
    async with engine.begin() as connection:
        await connection.execute(
            update(Reply)
            .where(col(Reply.id) == claim_id, col(Reply.status) == CLAIMED)
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
    leftover = [col(Reply.status) == CLAIMED]
    if keep:
        leftover.append(tuple_(col(Reply.channel), col(Reply.thread_ts)).not_in(list(keep)))
    result = await connection.execute(update(Reply).where(*leftover).values(status=INTERRUPTED))
    await session.commit()
    return int(result.rowcount or 0)


async def interrupt(engine: AsyncEngine, *, channel: str, thread_ts: str) -> int:
    """The conversation's claims still `claimed` by a job whose process died: owed again."""
    async with engine.begin() as connection:
        result = await connection.execute(
            update(Reply)
            .where(
                col(Reply.status) == CLAIMED,
                col(Reply.channel) == channel,
                col(Reply.thread_ts) == thread_ts,
            )
            .values(status=INTERRUPTED)
        )
        return int(result.rowcount or 0)
