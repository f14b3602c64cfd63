"""Type and shape guards for what a Slack message carries into the database and the timers.

A signed payload is Slack's, but its fields are still only JSON: a `user` that is an object,
a `subtype` that is a list or a `ts` of "nan" would break routing, the group commit or the
timers later, far from where it came in. A message whose keys fail these checks is refused
at parsing (and logged); its text and files are read tolerantly elsewhere.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any, TypeGuard

from app.slack.timestamps import slack_ts

# Slack's ids: "C024BE91L", "U0G9QF9C6", "B01", "T0001"; the columns hold 32 characters.
_ID = re.compile(r"[A-Za-z0-9_-]{1,32}").fullmatch
_NAMES = (("subtype", 64), ("channel_type", 16))  # with the lengths their columns hold


def slack_id(value: object) -> TypeGuard[str]:
    """Whether `value` can be a Slack id (of a channel, a user, a bot, a team, an event)."""
    return type(value) is str and _ID(value) is not None


def message_problem(raw: dict[str, Any]) -> str | None:
    """Why this message (from an event or the Web API) cannot be stored, or None when it can."""
    if slack_ts(raw.get("ts")) is None:
        return f"ts {shown(raw.get('ts'))} is not a Slack timestamp"
    thread_ts = raw.get("thread_ts")
    if thread_ts not in (None, "") and slack_ts(thread_ts) is None:
        return f"thread_ts {shown(thread_ts)} is not a Slack timestamp"
    for key in ("user", "bot_id", "team"):
        value = raw.get(key)
        if value not in (None, "") and not slack_id(value):
            return f"{key} {shown(value)} is not a Slack id"
    for key, longest in _NAMES:
        value = raw.get(key)
        if value is not None and (type(value) is not str or len(value) > longest):
            return f"{key} {shown(value)} is not a {key}"
    return None


_SHORT = reprlib.Repr()  # Python 3.11's takes no arguments
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 2, 40, 40, 40


def shown(value: object) -> str:
    """A value for a log line: its repr, cut short however long or deep it is."""
    return _SHORT.repr(value)
