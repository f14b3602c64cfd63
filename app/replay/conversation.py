"""The replay's input: a conversation as JSON lines, one message a line.

    {"at": "0:40", "channel": "general", "user": "bob", "text": "me too", "thread": "lunch"}

`at` is the time offset from the start (seconds, or "M:SS" / "H:MM:SS"); `channel` a channel
name (or a Slack id such as C0123ABCD); `user` a display name; `text` what they wrote, where
`@tomo` (or `@` and the persona's name) mentions the bot and `@name` mentions a person of the
file. Optional: `id`, a label for a top-level message that later lines' `thread` names to reply
in its thread; `channel_type` ("im" for a direct message with the bot). Blank lines and lines
starting with `#` are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

SLACK_ID = re.compile(r"^[CDG][A-Z0-9]{2,}$")


class ReplayError(ValueError):
    """The conversation file cannot be replayed; the message names the line."""


@dataclass(frozen=True)
class ReplayLine:
    number: int  # in the file, for messages
    at: float
    channel: str
    user: str
    text: str
    thread: str | None = None
    id: str | None = None
    channel_type: str = "channel"


def parse_offset(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("not a time offset")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and re.fullmatch(r"\d+(:\d{1,2}){0,2}(\.\d+)?", value.strip()):
        seconds = 0.0
        for part in value.strip().split(":"):
            seconds = seconds * 60 + float(part)
    else:
        raise ValueError(f"not a time offset: {value!r}")
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"negative time offset: {value!r}")
    return seconds


def _text(entry: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{key}` must be a non-empty string")
    return value.strip() if key != "text" else value


def _line(number: int, entry: Any, known: dict[str, ReplayLine]) -> ReplayLine:
    if not isinstance(entry, dict):
        raise ValueError("each line must be a JSON object")
    if "at" not in entry:
        raise ValueError("`at` (the time offset) is missing")
    at = parse_offset(entry["at"])
    channel = (_text(entry, "channel") or "").lstrip("#")
    thread = _text(entry, "thread", required=False)
    label = _text(entry, "id", required=False)
    if thread is not None:
        parent = known.get(thread)
        if parent is None:
            raise ValueError(f"`thread` names {thread!r}, which no earlier line has as `id`")
        if parent.thread is not None or parent.channel != channel:
            raise ValueError(f"`thread` {thread!r} is not a top-level message of #{channel}")
    if label is not None and label in known:
        raise ValueError(f"`id` {label!r} is used twice")
    channel_type = _text(entry, "channel_type", required=False) or "channel"
    if channel_type not in ("channel", "group", "im", "mpim"):
        raise ValueError(f"unknown channel_type {channel_type!r}")
    return ReplayLine(
        number=number,
        at=at,
        channel=channel,
        user=_text(entry, "user") or "",
        text=_text(entry, "text") or "",
        thread=thread,
        id=label,
        channel_type=channel_type,
    )


def parse_conversation(text: str) -> list[ReplayLine]:
    """Every message of the file, in order; raises ReplayError naming the first bad line."""
    lines: list[ReplayLine] = []
    known: dict[str, ReplayLine] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            entry = json.loads(raw)
        except ValueError as error:
            raise ReplayError(f"line {number}: not JSON ({error})") from None
        try:
            line = _line(number, entry, known)
        except ValueError as error:
            raise ReplayError(f"line {number}: {error}") from None
        if lines and line.at < lines[-1].at:
            raise ReplayError(f"line {number}: `at` goes back in time ({line.at:g} s)")
        lines.append(line)
        if line.id is not None:
            known[line.id] = line
    if not lines:
        raise ReplayError("the file has no message")
    return lines
