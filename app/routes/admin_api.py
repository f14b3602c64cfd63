"""/admin/overview, /admin/timers, /admin/decisions, /admin/memories (with tomo's notes),
/admin/llm-usage: what the operator sees, as JSON. The admin page renders the same queries."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Query
from sqlalchemy import and_, case, func
from sqlalchemy import select as select_columns
from sqlmodel import col, select

from app.context.instructions import all_instructions
from app.conversation.voice.channel_modes import all_modes
from app.db.models import Channel, Judgment, LLMCall, Memory, Message, Reply
from app.jobs.kinds import CHANNEL_JOBS
from app.memory import notebook
from app.routes.admin import AdminRuntime
from app.routes.admin_calls import reply_calls
from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

# response_model=None on each route: the bodies are plain dicts, and a response model per
# route would cost start-up its pydantic schema (and FastAPI's import of pydantic.v1).
router = APIRouter(prefix="/admin")

USAGE_WINDOWS = {"24h": 86400.0, "7d": 7 * 86400.0}
DECISION_LIMIT = 50
MEMORY_LIMIT = 200


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    try:
        return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, ValueError, OSError):  # inf, NaN, 1e300: a stored poison value
        logger.warning("skipped a stored time that is no time: %r", epoch)
        return None


async def _channel_names(runtime: Runtime) -> dict[str, str]:
    async with runtime.engine.connect() as connection:
        rows = await connection.execute(select(col(Channel.id), col(Channel.name)))
        return {row.id: row.name for row in rows if row.name}


async def pending_timers(runtime: Runtime) -> list[dict[str, Any]]:
    """The judgment and reply timers, soonest first, with the message that set each."""
    timers = [t for t in await runtime.timers.list() if t.kind in CHANNEL_JOBS]
    keys = [(t.channel or "", t.latest_ts or "") for t in timers]
    texts: dict[tuple[str, str], str] = {}
    if keys:
        async with runtime.engine.connect() as connection:
            rows = await connection.execute(
                select(col(Message.channel), col(Message.ts), col(Message.text)).where(
                    col(Message.ts).in_([ts for _, ts in keys])
                )
            )
            texts = {(row.channel, row.ts): row.text for row in rows}
    names = await _channel_names(runtime)
    result = []
    for timer in timers:
        result.append(
            {
                "id": timer.id,
                "kind": timer.kind,
                "channel": timer.channel,
                "channel_name": names.get(timer.channel or ""),
                "thread_ts": timer.thread_ts,
                "latest_ts": timer.latest_ts,
                "latest_text": texts.get((timer.channel or "", timer.latest_ts or "")),
                "reason": timer.reason,
                "run_at": iso(timer.run_at.timestamp()) if timer.run_at else None,
                "seconds_left": round(timer.seconds_left, 3)
                if timer.seconds_left is not None
                else None,
            }
        )
    return result


async def channel_modes(runtime: Runtime) -> list[dict[str, Any]]:
    """Each channel's /tomo mode (channels never set are normal), when its memories were
    forgotten and its standing instructions, the most recently changed first."""
    async with runtime.engine.connect() as connection:
        modes = await all_modes(connection)
        instructions = await all_instructions(connection)
    names = await _channel_names(runtime)
    return [
        {
            "channel": mode.channel,
            "channel_name": names.get(mode.channel),
            "mode": mode.mode.value,
            "quiet_until": iso(mode.quiet_until),
            "quiet_ended_at": iso(mode.ended_at),
            "changed_by": mode.changed_by or None,
            "changed_at": iso(mode.changed_at) if mode.changed_at else None,
            "forgotten_at": iso(mode.forgotten_at),
            "instructions": (given := instructions.get(mode.channel)) and given.text,
            "instructions_by": given.set_by if given else None,
            "instructions_at": iso(given.set_at) if given else None,
        }
        for mode in modes
    ]


async def latest_decisions(runtime: Runtime, *, limit: int) -> list[dict[str, Any]]:
    """The newest judgments with the message judged and what became of the reply."""
    statement = (
        select(Judgment, col(Reply.status), col(Reply.posted_ts), col(Message.text))
        .outerjoin(
            Reply,
            and_(
                col(Reply.channel) == col(Judgment.channel),
                col(Reply.thread_ts) == col(Judgment.thread_ts),
                col(Reply.trigger_ts) == col(Judgment.latest_ts),
            ),
        )
        .outerjoin(
            Message,
            and_(
                col(Message.channel) == col(Judgment.channel),
                col(Message.ts) == col(Judgment.latest_ts),
            ),
        )
        .order_by(col(Judgment.decided_at).desc(), col(Judgment.id).desc())
        .limit(limit)
    )
    async with runtime.sessions() as session:
        rows = (await session.exec(statement)).all()
    calls = await reply_calls(runtime, [(j.channel, j.thread_ts, j.latest_ts) for j, *_ in rows])
    names = await _channel_names(runtime)
    pending = {(t.channel, t.thread_ts, t.latest_ts) for t in await runtime.timers.list()}
    decisions = []
    for decision, status, posted_ts, text in rows:
        key = (decision.channel, decision.thread_ts, decision.latest_ts)
        if status is None and decision.should_respond and key in pending:
            status = "pending"
        decisions.append(
            {
                "id": decision.id,
                "channel": decision.channel,
                "channel_name": names.get(decision.channel),
                "thread_ts": decision.thread_ts,
                "latest_ts": decision.latest_ts,
                "latest_text": text,
                "decided_at": iso(decision.decided_at),
                "valid": decision.valid,
                "should_respond": decision.should_respond,
                "follow_up": decision.follow_up,
                "reaction": decision.reaction,  # the emoji added instead of a reply
                "reason": decision.reason,
                "confidence": decision.confidence,
                "delay_seconds": decision.delay_seconds,
                "model": decision.model,
                "prompt_tokens": decision.prompt_tokens,
                "completion_tokens": decision.completion_tokens,
                "reply_status": status,  # posted, failed, claimed, stale, pending or None
                "replied": status == "posted",
                "reply_ts": posted_ts,
                # The model calls the reply made (its rounds of tool calls, its answer).
                "reply_calls": calls.get(key, (0, 0))[0],
                "reply_tokens": calls.get(key, (0, 0))[1],
            }
        )
    return decisions


async def stored_memories(runtime: Runtime, *, limit: int = MEMORY_LIMIT) -> list[dict[str, Any]]:
    statement = (
        select(Memory)
        .order_by(col(Memory.scope), col(Memory.scope_id), col(Memory.kind))
        .limit(limit)
    )
    async with runtime.sessions() as session:
        memories = (await session.exec(statement)).all()
    return [
        {
            "scope": m.scope,
            "scope_id": m.scope_id,
            "kind": m.kind,
            "content": m.content,
            "source_ts": m.source_ts,
            "updated_at": iso(m.updated_at),
            "model": m.model,
        }
        for m in memories
    ]


async def stored_notes(runtime: Runtime, *, limit: int = MEMORY_LIMIT) -> list[dict[str, Any]]:
    async with runtime.engine.connect() as connection:
        notes = await notebook.every_note(connection, limit=limit)
    fields = ("id", "conversation", "scope", "text", "importance", "about", "claim_id")
    return [{**{f: getattr(n, f) for f in fields}, "created_at": iso(n.created_at)} for n in notes]


async def llm_usage(runtime: Runtime, *, now: float | None = None) -> dict[str, Any]:
    """Calls, failures, tokens, latency and cost per purpose over the last 24 h and 7 days.
    `cost_usd` sums the calls LiteLLM could price (`priced_calls` of them); null when none."""
    now = time.time() if now is None else now
    windows: dict[str, Any] = {}
    async with runtime.engine.connect() as connection:
        for name, seconds in USAGE_WINDOWS.items():
            rows = await connection.execute(
                select_columns(
                    col(LLMCall.purpose),
                    func.count().label("calls"),
                    func.sum(case((col(LLMCall.success) == False, 1), else_=0)).label("failures"),  # noqa: E712
                    func.sum(col(LLMCall.prompt_tokens)).label("prompt_tokens"),
                    func.sum(col(LLMCall.cached_tokens)).label("cached_tokens"),
                    func.sum(col(LLMCall.completion_tokens)).label("completion_tokens"),
                    func.sum(col(LLMCall.cost_usd)).label("cost_usd"),
                    func.count(col(LLMCall.cost_usd)).label("priced_calls"),
                    func.avg(col(LLMCall.latency_ms)).label("avg_latency_ms"),
                )
                .where(col(LLMCall.started_at) >= now - seconds)
                .group_by(col(LLMCall.purpose))
                .order_by(col(LLMCall.purpose))
            )
            purposes = [_usage_row(dict(row._mapping)) for row in rows]
            windows[name] = {"purposes": purposes, "total": _total(purposes)}
    return {"windows": windows}


def _usage_row(row: dict[str, Any]) -> dict[str, Any]:
    prompt, completion = int(row["prompt_tokens"] or 0), int(row["completion_tokens"] or 0)
    return {
        "purpose": row["purpose"],
        "calls": int(row["calls"]),
        "failures": int(row["failures"] or 0),
        "prompt_tokens": prompt,
        "cached_tokens": int(row["cached_tokens"] or 0),
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "cost_usd": float(row["cost_usd"]) if row["cost_usd"] is not None else None,
        "priced_calls": int(row["priced_calls"]),
        "avg_latency_ms": round(float(row["avg_latency_ms"] or 0), 1),
    }


def _total(purposes: list[dict[str, Any]]) -> dict[str, Any]:
    costs = [p["cost_usd"] for p in purposes if p["cost_usd"] is not None]
    total: dict[str, Any] = {"purpose": "total"}
    keys = ("calls", "failures", "prompt_tokens", "cached_tokens", "completion_tokens")
    for key in (*keys, "total_tokens"):
        total[key] = sum(p[key] for p in purposes)
    total["cost_usd"] = sum(costs) if costs else None
    total["priced_calls"] = sum(p["priced_calls"] for p in purposes)
    latency = sum(p["avg_latency_ms"] * p["calls"] for p in purposes)
    total["avg_latency_ms"] = round(latency / total["calls"], 1) if total["calls"] else 0.0
    return total


async def overview(runtime: Runtime, *, decision_limit: int = DECISION_LIMIT) -> dict[str, Any]:
    return {
        "generated_at": iso(time.time()),
        "timers": await pending_timers(runtime),
        "channel_modes": await channel_modes(runtime),
        "decisions": await latest_decisions(runtime, limit=decision_limit),
        "memories": await stored_memories(runtime),
        "notes": await stored_notes(runtime),
        "llm_usage": await llm_usage(runtime),
    }


@router.get("/overview", response_model=None)
async def get_overview(runtime: AdminRuntime) -> dict[str, Any]:
    return await overview(runtime)


@router.get("/timers", response_model=None)
async def get_timers(runtime: AdminRuntime) -> dict[str, Any]:
    return {"timers": await pending_timers(runtime)}


@router.get("/decisions", response_model=None)
async def get_decisions(
    runtime: AdminRuntime, limit: int = Query(DECISION_LIMIT, ge=1, le=500)
) -> dict[str, Any]:
    return {"decisions": await latest_decisions(runtime, limit=limit)}


@router.get("/memories", response_model=None)
async def get_memories(runtime: AdminRuntime) -> dict[str, Any]:
    return {"memories": await stored_memories(runtime), "notes": await stored_notes(runtime)}


@router.get("/llm-usage", response_model=None)
async def get_llm_usage(runtime: AdminRuntime) -> dict[str, Any]:
    return await llm_usage(runtime)
