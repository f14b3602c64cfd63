"""Slack's paging and time filters for the stand-in: cursors, `limit`, `oldest`/`latest`."""

from __future__ import annotations

import base64
from typing import Any

Params = dict[str, Any]
Message = dict[str, Any]


class SlackError(Exception):
    """Raised by a method to answer ``{"ok": false, "error": str(exc)}``."""


def ts_micros(ts: str) -> int:
    seconds, _, fraction = str(ts).partition(".")
    return int(seconds) * 1_000_000 + int((fraction + "000000")[:6])


def by_ts(message: Message) -> int:
    return ts_micros(message["ts"])


def _limit(value: Any, default: int) -> int:
    try:
        parsed = int(value)
    except (TypeError, ValueError):
        return default
    return parsed if parsed > 0 else default


def paginate(items: list[Any], key: str, params: Params, default_limit: int) -> dict[str, Any]:
    limit = _limit(params.get("limit"), default_limit)
    offset = 0
    if params.get("cursor"):
        try:
            offset = int(base64.b64decode(str(params["cursor"])).decode().removeprefix("offset:"))
        except ValueError as exc:
            raise SlackError("invalid_cursor") from exc
    end = offset + limit
    has_more = end < len(items)
    cursor = base64.b64encode(f"offset:{end}".encode()).decode() if has_more else ""
    metadata = {"next_cursor": cursor}
    return {"ok": True, key: items[offset:end], "has_more": has_more, "response_metadata": metadata}


def in_range(message: Message, params: Params) -> bool:
    """Apply Slack's ``oldest`` / ``latest`` / ``inclusive`` filters."""
    ts = by_ts(message)
    inclusive = str(params.get("inclusive", "")).lower() in {"1", "true"}
    if params.get("oldest"):
        oldest = ts_micros(params["oldest"])
        if ts < oldest or (ts == oldest and not inclusive):
            return False
    if params.get("latest"):
        latest = ts_micros(params["latest"])
        if ts > latest or (ts == latest and not inclusive):
            return False
    return True
