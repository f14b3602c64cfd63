"""The calls waiting for a person's approval, and what became of them (app.db.models.mcp's
McpApproval; docs/tools.md#approvals). Every change of state is one conditional UPDATE: of
two clicks, two instances or a job run twice, exactly one moves an approval on."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.models.mcp import ApprovalState, McpApproval

State = ApprovalState
DECLINED = (State.DENIED, State.EXPIRED)


async def create(engine: AsyncEngine, **values: Any) -> McpApproval:
    values = {"state": State.PENDING.value, "created_at": time.time(), **values}
    async with engine.begin() as connection:
        result = await connection.execute(insert(McpApproval).values(**values))
        key = result.inserted_primary_key
        assert key is not None
    return McpApproval(id=int(key[0]), **values)


async def get(engine: AsyncEngine, approval_id: int) -> McpApproval | None:
    async with engine.connect() as connection:
        row = (
            await connection.execute(select(McpApproval).where(col(McpApproval.id) == approval_id))
        ).first()
    return McpApproval.model_validate(row._mapping) if row is not None else None


async def of_claim(engine: AsyncEngine, claim_id: int) -> list[McpApproval]:
    return await _where(engine, col(McpApproval.claim_id) == claim_id)


async def pending_in(engine: AsyncEngine, *, channel: str, thread_ts: str) -> list[McpApproval]:
    """The conversation's approvals still waiting for a decision."""
    return await _where(
        engine,
        col(McpApproval.channel) == channel,
        col(McpApproval.thread_ts) == thread_ts,
        col(McpApproval.state) == State.PENDING.value,
    )


async def unfinished(engine: AsyncEngine, **where: str) -> list[McpApproval]:
    """Approvals whose reply is not settled yet (of one conversation: channel=, thread_ts=)."""
    terms = [col(getattr(McpApproval, k)) == v for k, v in where.items()]
    return await _where(engine, col(McpApproval.state) != State.DONE.value, *terms)


async def _where(engine: AsyncEngine, *terms: Any) -> list[McpApproval]:
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(McpApproval).where(*terms).order_by(col(McpApproval.id))
        )
        return [McpApproval.model_validate(row._mapping) for row in rows]


async def _move(engine: AsyncEngine, approval_id: int, *terms: Any, **values: Any) -> bool:
    async with engine.begin() as connection:
        moved = await connection.execute(
            update(McpApproval).where(col(McpApproval.id) == approval_id, *terms).values(**values)
        )
        return moved.rowcount == 1


async def set_card(engine: AsyncEngine, approval_id: int, card_ts: str) -> None:
    await _move(engine, approval_id, card_ts=card_ts)


async def decide(engine: AsyncEngine, approval_id: int, *, approved: bool, user_id: str) -> bool:
    """The person's click, if it is the first decision and in time; False otherwise."""
    now = time.time()
    decision = State.APPROVED if approved else State.DENIED
    return await _move(
        engine,
        approval_id,
        col(McpApproval.state) == State.PENDING.value,
        col(McpApproval.expires_at) > now,
        state=decision.value,
        decision=decision.value,
        decided_by=user_id,
        decided_at=now,
    )


async def expire(engine: AsyncEngine, approval_id: int) -> bool:
    now = time.time()
    return await _move(
        engine,
        approval_id,
        col(McpApproval.state) == State.PENDING.value,
        col(McpApproval.expires_at) <= now,
        state=State.EXPIRED.value,
        decision=State.EXPIRED.value,
        decided_at=now,
    )


async def start_call(engine: AsyncEngine, approval_id: int) -> bool:
    """The one right to make the approved call: taken once, whoever asks again."""
    return await _move(
        engine,
        approval_id,
        col(McpApproval.state) == State.APPROVED.value,
        state=State.CALLING.value,
        called_at=time.time(),
    )


async def cut_short(engine: AsyncEngine, approval_id: int) -> bool:
    """The process making the call is gone (its job was taken for dead, or this process
    started anew): the call may or may not have been made, and is never made again."""
    return await _move(
        engine,
        approval_id,
        col(McpApproval.state) == State.CALLING.value,
        state=State.CUT_SHORT.value,
    )


async def answer(
    engine: AsyncEngine, approval_id: int, *, result: str, was: tuple[State, ...]
) -> bool:
    """What the model is told, stored once, from one of the states `was`."""
    return await _move(
        engine,
        approval_id,
        col(McpApproval.state).in_([state.value for state in was]),
        state=State.ANSWERED.value,
        result=result,
    )


async def finish(engine: AsyncEngine, approval_id: int) -> None:
    await _move(engine, approval_id, state=State.DONE.value)
