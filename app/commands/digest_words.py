"""What follows `/tomo digest`: `daily HH:MM`, `weekly DAY HH:MM` (`mon`…`sun`), `off`, `now`,
with Japanese words too (`毎日 9:00`, `毎週 月曜 17時30分`, `停止`, `今すぐ`)."""

from __future__ import annotations

import re
from enum import StrEnum

from app.commands.words import normalize
from app.digest.schedule import Cadence, Schedule


class DigestWord(StrEnum):
    OFF = "off"
    NOW = "now"
    SHOW = "show"


OTHER_WORDS: dict[str, DigestWord] = {
    **dict.fromkeys(("off", "stop", "停止", "止めて", "とめて", "オフ"), DigestWord.OFF),
    **dict.fromkeys(("now", "今すぐ", "いますぐ", "今"), DigestWord.NOW),
}
CADENCES: dict[str, Cadence] = {
    **dict.fromkeys(("daily", "day", "毎日"), Cadence.DAILY),
    **dict.fromkeys(("weekly", "week", "毎週"), Cadence.WEEKLY),
}
WEEKDAYS: dict[str, int] = {}
for _number, _names in enumerate(
    (
        ("mon", "monday", "月", "月曜", "月曜日"),
        ("tue", "tues", "tuesday", "火", "火曜", "火曜日"),
        ("wed", "wednesday", "水", "水曜", "水曜日"),
        ("thu", "thur", "thurs", "thursday", "木", "木曜", "木曜日"),
        ("fri", "friday", "金", "金曜", "金曜日"),
        ("sat", "saturday", "土", "土曜", "土曜日"),
        ("sun", "sunday", "日", "日曜", "日曜日"),
    )
):
    WEEKDAYS.update(dict.fromkeys(_names, _number))
_TIME = re.compile(r"([01]?\d|2[0-3])(?::([0-5]\d)|時(?:([0-5]?\d)分)?)")


class BadSchedule(ValueError):
    """Not a schedule tomo understands; the person gets told how to write one."""


def parse_schedule(text: str) -> Schedule:
    """`daily 09:00`, `weekly mon 17:30` (`毎日 9:00`, `毎週 月曜 17時30分`); BadSchedule."""
    words = normalize(text).split()
    cadence = CADENCES.get(words[0]) if words else None
    if cadence is None:
        raise BadSchedule(text)
    rest = words[1:]
    weekday = None
    if cadence is Cadence.WEEKLY:
        if len(rest) != 2 or rest[0] not in WEEKDAYS:
            raise BadSchedule(text)
        weekday, rest = WEEKDAYS[rest[0]], rest[1:]
    clock = _TIME.fullmatch(rest[0]) if len(rest) == 1 else None
    if clock is None:
        raise BadSchedule(text)
    minute = clock.group(2) or clock.group(3) or "0"
    return Schedule(cadence, int(clock.group(1)), int(minute), weekday)
