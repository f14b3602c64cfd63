"""When a channel's digest is due (docs/how-tomo-works.md#digests): `daily HH:MM` or `weekly DAY
HH:MM`, a wall-clock time in TIMEZONE. The next due time is found with zoneinfo, so a
daylight-saving change keeps the wall-clock time (09:00 stays 09:00; a time the change skips
comes an hour later that day, a time it repeats comes the first time)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

DAY_SECONDS = 86400.0


class Cadence(StrEnum):
    DAILY = "daily"
    WEEKLY = "weekly"

    @property
    def window(self) -> float:
        """The longest period one digest covers: the last 24 hours, or 7 days."""
        return DAY_SECONDS if self is Cadence.DAILY else 7 * DAY_SECONDS


@dataclass(frozen=True)
class Schedule:
    cadence: Cadence
    hour: int
    minute: int
    weekday: int | None = None  # weekly: 0 Monday .. 6 Sunday


def next_due(schedule: Schedule, *, after: float, zone: ZoneInfo) -> float:
    """The first due time strictly after `after` (epoch seconds), as epoch seconds."""
    day = datetime.fromtimestamp(after, zone).date()
    for offset in range(0, 9):
        date = day + timedelta(days=offset)
        if schedule.weekday is not None and date.weekday() != schedule.weekday:
            continue
        local = datetime(date.year, date.month, date.day, schedule.hour, schedule.minute)
        moment = local.replace(tzinfo=zone).timestamp()
        if moment > after:
            return moment
    raise AssertionError("a due time is always within 8 days")  # pragma: no cover
