"""The feedback people give tomo's replies (docs/how-tomo-works.md#feedback): stored one per
person and message (a second click replaces the first, as Slack's buttons toggle), read back
with the reply it was given to and the decision behind that reply."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import Feedback, Judgment, Reply


@dataclass(frozen=True)
class Given:
    """One feedback row with what it was given to."""

    channel: str
    reply_ts: str
    user_id: str
    value: str
    at: float
    reason: str | None  # the reply's reason (mention, dm, follow_up, auto_reply, judgment)
    thread_ts: str | None
    decision: dict[str, Any] | None  # the judgment behind the reply, where there is one


async def record(
    engine: AsyncEngine,
    *,
    channel: str,
    reply_ts: str,
    user_id: str,
    value: str,
    claim_id: int | None,
    at: float | None = None,
) -> None:
    """Store a click; the same person's earlier one on that message is replaced."""
    row = {
        "channel": channel,
        "reply_ts": reply_ts,
        "user_id": user_id,
        "value": value,
        "claim_id": claim_id,
        "at": time.time() if at is None else at,
    }
    async with engine.begin() as connection:
        statement = upsert(connection.dialect.name, Feedback).values(row)
        await connection.execute(
            statement.on_conflict_do_update(
                index_elements=["channel", "reply_ts", "user_id"],
                set_={"value": row["value"], "claim_id": row["claim_id"], "at": row["at"]},
            )
        )


async def given(engine: AsyncEngine, *, since: float | None, limit: int) -> list[Given]:
    """Feedback given since `since` (None: all kept), newest first, at most `limit`."""
    reply_match = or_(
        col(Reply.id) == col(Feedback.claim_id),
        and_(col(Feedback.claim_id).is_(None), col(Reply.posted_ts) == col(Feedback.reply_ts)),
    )
    statement = (
        select(
            col(Feedback.channel),
            col(Feedback.reply_ts),
            col(Feedback.user_id),
            col(Feedback.value),
            col(Feedback.at),
            col(Reply.reason),
            col(Reply.thread_ts),
            col(Reply.trigger_ts),
        )
        .outerjoin(Reply, and_(col(Reply.channel) == col(Feedback.channel), reply_match))
        .order_by(col(Feedback.at).desc(), col(Feedback.id).desc())
        .limit(limit)
    )
    if since is not None:
        statement = statement.where(col(Feedback.at) >= since)
    async with engine.connect() as connection:
        rows = (await connection.execute(statement)).all()
        keys = {(r.channel, r.thread_ts, r.trigger_ts) for r in rows if r.trigger_ts is not None}
        decisions = await _decisions(connection, keys)
    return [
        Given(
            channel=row.channel,
            reply_ts=row.reply_ts,
            user_id=row.user_id,
            value=row.value,
            at=row.at,
            reason=row.reason,
            thread_ts=row.thread_ts,
            decision=decisions.get((row.channel, row.thread_ts, row.trigger_ts)),
        )
        for row in rows
    ]


async def _decisions(
    connection: AsyncConnection, keys: set[tuple[str, str, str]]
) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The judgment behind each reply that had one: the message it judged is the one the
    reply answered."""
    if not keys:
        return {}
    found = await connection.execute(
        select(
            col(Judgment.channel),
            col(Judgment.thread_ts),
            col(Judgment.latest_ts),
            col(Judgment.should_respond),
            col(Judgment.reason),
            col(Judgment.confidence),
            col(Judgment.follow_up),
            col(Judgment.decided_at),
        ).where(col(Judgment.latest_ts).in_(sorted({key[2] for key in keys})))
    )
    decisions: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in found:
        key = (row.channel, row.thread_ts, row.latest_ts)
        if key in keys:
            decisions[key] = {
                "should_respond": row.should_respond,
                "reason": row.reason,
                "confidence": row.confidence,
                "follow_up": row.follow_up,
                "decided_at": row.decided_at,
            }
    return decisions
