"""GET /admin/feedback: the feedback people gave tomo's replies, as JSON, and its sums per reply
reason for the admin page (docs/admin-and-replay.md).

Each item: the message (`channel`, `reply_ts`), the reply's `reason` (mention, dm, follow_up,
auto_reply, judgment — joined on its own; null when the reply's claim is no longer kept), who
(`user`), `value` (positive or negative) and when (`at`, ISO 8601 UTC), with the `decision`
behind the reply where a judgment made it.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Query

from app.db import feedback
from app.routes.admin import AdminRuntime
from app.routes.admin_api import iso
from app.wiring.runtime import Runtime

router = APIRouter(prefix="/admin")

FEEDBACK_LIMIT = 500
# The page's rows, in this order; "judgment" is tomo joining a conversation on its own.
REASONS = ("mention", "dm", "follow_up", "auto_reply", "judgment")
REASON_NAMES = {
    "mention": "mention",
    "dm": "DM",
    "follow_up": "follow-up",
    "auto_reply": "auto-reply channel",
    "judgment": "joined on its own",
    "": "reply no longer kept",
}


async def feedback_given(
    runtime: Runtime, *, days: float | None = None, limit: int = FEEDBACK_LIMIT
) -> list[dict[str, Any]]:
    since = time.time() - days * 86400 if days else None
    rows = await feedback.given(runtime.engine, since=since, limit=limit)
    return [
        {
            "channel": row.channel,
            "reply_ts": row.reply_ts,
            "reason": row.reason,
            "user": row.user_id,
            "value": row.value,
            "at": iso(row.at),
            "thread_ts": row.thread_ts,
            "decision": _decision(row.decision),
        }
        for row in rows
    ]


def _decision(decision: dict[str, Any] | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    return decision | {"decided_at": iso(decision["decided_at"])}


def sums(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per reply reason: 👍, 👎 and the share of 👍 (None without any feedback)."""
    counted: dict[str, dict[str, int]] = {}
    for item in items:
        reason = item["reason"] if item["reason"] in REASONS else ""
        counts = counted.setdefault(reason, {"positive": 0, "negative": 0})
        counts[item["value"]] = counts.get(item["value"], 0) + 1
    result = []
    for reason in (*REASONS, ""):
        counts = counted.get(reason, {"positive": 0, "negative": 0})
        total = counts["positive"] + counts["negative"]
        if reason == "" and not total:
            continue
        result.append(
            {
                "reason": reason or None,
                "name": REASON_NAMES[reason],
                "positive": counts["positive"],
                "negative": counts["negative"],
                "share_positive": counts["positive"] / total if total else None,
            }
        )
    return result


def per_reply(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The feedback of each reply (its message), the most recently clicked first."""
    replies: dict[tuple[str, str], dict[str, Any]] = {}
    for item in items:  # newest first
        key = (item["channel"], item["reply_ts"])
        reply = replies.setdefault(
            key,
            {
                "channel": item["channel"],
                "reply_ts": item["reply_ts"],
                "reason": item["reason"],
                "name": REASON_NAMES.get(item["reason"] or "", item["reason"]),
                "decision": item["decision"],
                "at": item["at"],
                "positive": 0,
                "negative": 0,
            },
        )
        reply[item["value"]] = reply.get(item["value"], 0) + 1
    return list(replies.values())


@router.get("/feedback", response_model=None)
async def get_feedback(
    runtime: AdminRuntime,
    days: float | None = Query(None, gt=0, le=3650),
    limit: int = Query(FEEDBACK_LIMIT, ge=1, le=5000),
) -> dict[str, Any]:
    return {"feedback": await feedback_given(runtime, days=days, limit=limit)}
