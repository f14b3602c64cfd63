"""The model calls each reply made, for the admin page's decisions: a reply's rounds of tool
calls and its answer are recorded under its claim (LLMCall.reply_id)."""

from __future__ import annotations

from sqlalchemy import func, select, tuple_
from sqlmodel import col

from app.db.models import LLMCall, Reply
from app.wiring.runtime import Runtime


async def reply_calls(
    runtime: Runtime, keys: list[tuple[str, str, str]]
) -> dict[tuple[str, str, str], tuple[int, int]]:
    """Per answered message (channel, thread, ts): how many model calls its reply made, and
    their tokens (prompt + written)."""
    if not keys:
        return {}
    statement = (
        select(
            col(Reply.channel),
            col(Reply.thread_ts),
            col(Reply.trigger_ts),
            func.count(),
            func.sum(
                func.coalesce(col(LLMCall.prompt_tokens), 0)
                + func.coalesce(col(LLMCall.completion_tokens), 0)
            ),
        )
        .join(LLMCall, col(LLMCall.reply_id) == col(Reply.id))
        .where(tuple_(col(Reply.channel), col(Reply.thread_ts), col(Reply.trigger_ts)).in_(keys))
        .group_by(col(Reply.channel), col(Reply.thread_ts), col(Reply.trigger_ts))
    )
    async with runtime.engine.connect() as connection:
        rows = (await connection.execute(statement)).all()
    return {(r[0], r[1], r[2]): (int(r[3]), int(r[4] or 0)) for r in rows}
