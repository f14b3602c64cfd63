"""Taking a claim on answering a message (docs/how-tomo-works.md#reply).

A reply first inserts a `reply` row keyed by (channel, thread_ts, trigger_ts); the unique key
makes a second claim on the same message fail, whatever retries, races or processes. The
claim stores the messages it will post before it posts the first one (app.conversation.claims.
ending, which also ends it or lets it go).

A claim owed still (`interrupted` or `uncertain`: app.conversation.claims.status) can be taken
over. A claim taken over that has its messages stored may have posted some of them: those are
looked up in Slack before any is sent again.
"""

from __future__ import annotations

import contextlib
import json
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.conversation.claims.status import OWED, ReplyStatus
from app.db.models import Reply
from app.domain import ReplyReason


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
        "status": ReplyStatus.CLAIMED,
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
        .values(status=ReplyStatus.CLAIMED, created_at=time.time())
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
