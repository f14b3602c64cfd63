"""What an operator reads when settings stop start-up: one short block, a line per variable with
its value's problem and what is allowed, and no traceback (app.settings.load_settings raises it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

import annotated_types
from pydantic.fields import FieldInfo

# What the required settings hold and where an operator finds them.
WHERE_TO_FIND = {
    "SLACK_SIGNING_SECRET": "the Signing Secret (Slack app > Basic Information > App Credentials)",
    "SLACK_BOT_TOKEN": "the bot token, xoxb-... (Slack app > OAuth & Permissions)",
}
SHOWN_VALUE_CHARS = 40


def allowed(field: FieldInfo) -> str:
    """What a field accepts, from its type and bounds: "a whole number from 1 to 100"."""
    kind = {"int": "a whole number", "float": "a number"}.get(
        getattr(field.annotation, "__name__", "")
    )
    if kind is None:
        if field.annotation is str:
            short = any(isinstance(m, annotated_types.MinLen) for m in field.metadata)
            return "non-empty text" if short else "text"
        return ""
    low = high = None
    for bound in field.metadata:
        if isinstance(bound, annotated_types.Ge):
            low = f"{bound.ge:g}"
        elif isinstance(bound, annotated_types.Gt):
            low = f"more than {bound.gt:g}"
        elif isinstance(bound, annotated_types.Le):
            high = f"{bound.le:g}"
        elif isinstance(bound, annotated_types.Lt):
            high = f"less than {bound.lt:g}"
    if low and high and not low.startswith("more"):
        return f"{kind} from {low} to {high}"
    if low:
        return f"{kind} {low}" if low.startswith("more") else f"{kind}, {low} or more"
    if high:
        return f"{kind} {high}" if high.startswith("less") else f"{kind}, {high} or less"
    return kind


def _problem(error: Mapping[str, Any], *, secret: bool) -> str:
    kind, value = error["type"], error.get("input")
    shown = "" if secret or not isinstance(value, str) else repr(value[:SHOWN_VALUE_CHARS])
    if kind == "missing":
        return "missing"
    if kind in {"string_too_short", "empty"} or (isinstance(value, str) and not value.strip()):
        return "empty"
    if kind in {"int_parsing", "int_from_float"}:
        return f"{shown} is not a whole number"
    if kind == "float_parsing":
        return f"{shown} is not a number"
    if kind in {"greater_than", "greater_than_equal"}:
        return f"{shown} is too small"
    if kind in {"less_than", "less_than_equal"}:
        return f"{shown} is too large"
    message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
    return f"{shown} {message}" if shown else message


def describe(
    errors: Iterable[Mapping[str, Any]],
    *,
    fields: Mapping[str, FieldInfo],
    secrets: Collection[str],
    environment: Collection[str],
    env_file: bool,
) -> str:
    """The block for these validation errors. `environment`: the names set as environment
    variables (the rest came from `.env`, or nowhere); `env_file`: a `.env` was there."""
    lines = []
    names = []
    for error in errors:
        name = ".".join(str(part) for part in error.get("loc", ())) or "settings"
        field = fields.get(name)
        problem = _problem(error, secret=name in secrets)
        if problem == "empty":
            where = "the environment" if name in environment else ".env"
            problem = f"empty in {where}"
        elif problem == "missing":
            problem = "missing (set in neither the environment nor .env)"
        if name in WHERE_TO_FIND:
            problem = f"{problem}; needs {WHERE_TO_FIND[name]}"
        elif field is not None and error["type"] != "value_error" and allowed(field):
            problem = f"{problem}; allowed: {allowed(field)}"
        names.append(name)
        lines.append(f"  {name}: {problem}")
    count = f"{len(lines)} setting{'s' if len(lines) != 1 else ''}"
    block = [f"tomo cannot start: {count} to fix (environment variables, or .env here):", *lines]
    if not env_file and any(name in WHERE_TO_FIND for name in names):
        block.append(
            "There is no .env here: cp .env.example .env, fill in SLACK_SIGNING_SECRET and "
            "SLACK_BOT_TOKEN, or export them."
        )
    block.append("Every setting is in .env.example and docs/settings.md.")
    return "\n".join(block)
