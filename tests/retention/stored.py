"""Rows put straight into tomo's database, as earlier days would have left them, and counts
of what is there: for the tests of what tomo keeps (docs/data-and-privacy.md)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import insert

from app.db.models import Feedback, Judgment, LLMCall, Memory, Message, Removal, Reply
from tests.conftest import Tomo

DAY = 86400.0
TABLES = ("message", "judgment", "reply", "feedback", "llm_call", "removal", "memory")


def ts_at(epoch: float, n: int = 0) -> str:
    return f"{int(epoch)}.{n:06d}"


async def put(tomo: Tomo, table: Any, /, **values: Any) -> None:
    async with tomo.runtime.engine.begin() as connection:
        await connection.execute(insert(table).values(**values))


async def put_message(
    tomo: Tomo,
    *,
    channel: str,
    ts: str,
    text: str,
    thread_ts: str = "",
    files: list[dict[str, Any]] | None = None,
) -> None:
    await put(
        tomo,
        Message,
        channel=channel,
        ts=ts,
        team_id="T0001",
        thread_ts=thread_ts,
        conversation_ts=thread_ts,
        route="record",
        user_id="U1",
        text=text,
        kind="conversational",
        created_at=float(ts),
        deleted=False,
        files=json.dumps(files) if files is not None else None,
    )


async def put_records(tomo: Tomo, *, channel: str, at: float, n: int) -> None:
    """A decision, a reply claim, a person's feedback on it, an LLM call and a removal note
    of time `at`."""
    ts = ts_at(at, n)
    await put(
        tomo,
        Judgment,
        channel=channel,
        thread_ts="",
        latest_ts=ts,
        decided_at=at,
        valid=True,
        should_respond=False,
        reason="quiet",
        model="m",
    )
    await put(
        tomo,
        Reply,
        channel=channel,
        thread_ts="",
        trigger_ts=ts,
        reason="judgment",
        status="posted",
        created_at=at,
    )
    await put(
        tomo,
        Feedback,
        channel=channel,
        reply_ts=ts_at(at, n + 1),
        user_id="U1",
        value="positive",
        claim_id=None,
        at=at,
    )
    await put(
        tomo, LLMCall, purpose="judgment", model="m", started_at=at, latency_ms=1.0, success=True
    )
    await put(
        tomo,
        Removal,
        channel=channel,
        ts=ts_at(at, n + 500),
        thread_ts="",
        created_at=at,
        removed_at=at,
    )


async def put_memory(tomo: Tomo, *, scope: str, scope_id: str, kind: str, content: str) -> None:
    await put(
        tomo,
        Memory,
        scope=scope,
        scope_id=scope_id,
        kind=kind,
        content=content,
        source_ts="1.0",
        updated_at=1.0,
        model="m",
    )


async def counts(tomo: Tomo, where: str = "") -> dict[str, int]:
    """Rows per table (`where`: a condition every table has the columns for)."""
    return {
        table: (await tomo.rows(f"SELECT count(*) AS n FROM {table} {where}"))[0]["n"]
        for table in TABLES
    }
