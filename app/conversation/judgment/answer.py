"""Reading the judgment model's answer: tolerant of fences and chatter, strict about values."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
# An emoji's name as reactions.add takes it: lowercase letters, digits, _ + - ' (Slack's custom
# emoji names allow these), at most 64 characters (a skin tone is written "name::skin-tone-2").
_EMOJI = re.compile(r"[a-z0-9_+'-]{1,64}(?:::skin-tone-[2-6])?")


class InvalidVerdict(ValueError):
    """The answer is not a usable judgment; the bot stays silent."""


@dataclass(frozen=True)
class Verdict:
    should_respond: bool
    reason: str
    confidence: float | None
    delay_seconds: float | None
    # A follow-up's judgment may acknowledge a closing message ("thanks!") with a reaction
    # instead of a message: the emoji's name, or None (also when it is not a name).
    reaction: str | None = None


def _objects(text: str) -> list[Any]:
    """Every JSON object that can be decoded from the text, in order."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for candidate in candidates:
        index = candidate.find("{")
        while index != -1:
            try:
                value, _end = decoder.raw_decode(candidate, index)
            except json.JSONDecodeError:
                index = candidate.find("{", index + 1)
                continue
            found.append(value)
            index = candidate.find("{", _end)
    return found


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "false"}:
        return value.strip().lower() == "true"
    raise InvalidVerdict(f"should_respond is not a boolean: {value!r}")


def _number(name: str, value: Any, *, low: float, high: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidVerdict(f"{name} is not a number: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidVerdict(f"{name} is not a number: {value!r}") from None
    if number != number or number < low or (high is not None and number > high):
        raise InvalidVerdict(f"{name} is out of range: {value!r}")
    return number


def _reaction(value: Any) -> str | None:
    """An emoji name, written with or without colons; anything else is no reaction (the
    verdict stands: a reaction is a nicety)."""
    if not isinstance(value, str):
        return None
    name = value.strip().strip(":").lower()
    return name if _EMOJI.fullmatch(name) else None


def parse_verdict(text: str, *, max_delay: float) -> Verdict:
    """The judgment in `text`; raises InvalidVerdict when there is none."""
    objects = [o for o in _objects(text) if isinstance(o, dict) and "should_respond" in o]
    if not objects:
        raise InvalidVerdict("no JSON object with should_respond in the answer")
    data = objects[-1]
    delay = data.get("delay_seconds")
    if delay is not None:
        delay = _number("delay_seconds", delay, low=float("-inf"), high=None)
        delay = min(max(delay or 0.0, 0.0), max_delay)
    return Verdict(
        should_respond=_bool(data["should_respond"]),
        reason=str(data.get("reason") or "")[:2000],
        confidence=_number("confidence", data.get("confidence"), low=0.0, high=1.0),
        delay_seconds=delay,
        reaction=_reaction(data.get("reaction")),
    )
