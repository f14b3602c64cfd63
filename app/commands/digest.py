"""`/tomo digest daily HH:MM`, `weekly DAY HH:MM`, `off`, `now`, and `/tomo digest` alone
(docs/how-tomo-works.md#digests): the channel's digest schedule, read in TIMEZONE, set, shown
or dropped, or a digest of the last 24 hours posted at once."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncEngine

from app.commands.answers import Said, escape, say
from app.commands.digest_words import OTHER_WORDS, BadSchedule, DigestWord, parse_schedule
from app.db.models import DigestSchedule
from app.digest.schedules import drop_schedule, read_schedule, set_schedule
from app.digest.timers import DigestTimers

logger = logging.getLogger(__name__)

RunDigest = Callable[..., Awaitable[dict[str, Any] | None]]


def shown(schedule: DigestSchedule, zone: ZoneInfo) -> dict[str, Any]:
    """What an answer (or /tomo status) says of a schedule."""
    return {
        "cadence": schedule.cadence,
        "weekday": schedule.weekday,
        "clock": f"{schedule.hour:02d}:{schedule.minute:02d}",
        "timezone": str(zone),
        "next_due_at": schedule.next_due_at,
        "set_by": schedule.set_by,
    }


class DigestCommand:
    def __init__(
        self, *, engine: AsyncEngine, digests: DigestTimers, run: RunDigest, zone: ZoneInfo
    ) -> None:
        self._engine = engine
        self._digests = digests
        self._run = run
        self._zone = zone

    async def schedule(self, channel: str) -> dict[str, Any] | None:
        async with self._engine.connect() as connection:
            found = await read_schedule(connection, channel)
        return shown(found, self._zone) if found else None

    async def run(self, *, channel: str, user: str, argument: str, language: str) -> Said:
        word = OTHER_WORDS.get(argument) if argument else DigestWord.SHOW
        if word is DigestWord.SHOW:
            current = await self.schedule(channel)
            return Said("digest_shown", {"schedule": current, "timezone": str(self._zone)})
        if word is DigestWord.OFF:
            dropped = await drop_schedule(self._engine, channel)
            await self._digests.drop(channel)
            logger.info("channel %s: digest schedule dropped by %s", channel, user)
            return Said("digest_off", {"was": dropped})
        if word is DigestWord.NOW:
            logger.info("channel %s: a digest now, asked by %s", channel, user)
            return Said("digest_now", {}, lambda: self._now(channel, language))
        try:
            schedule = parse_schedule(argument)
        except BadSchedule:
            return Said("digest_bad", {"given": escape(argument), "timezone": str(self._zone)})
        stored = await set_schedule(
            self._engine, channel=channel, schedule=schedule, user=user, zone=self._zone
        )
        await self._digests.arm(channel)
        logger.info(
            "channel %s: digest %s %02d:%02d (%s) set by %s, next due %.0f",
            channel,
            schedule.cadence.value,
            schedule.hour,
            schedule.minute,
            self._zone,
            user,
            stored.next_due_at,
        )
        return Said("digest_set", {"schedule": shown(stored, self._zone)})

    async def _now(self, channel: str, language: str) -> str | None:
        """The digest of the last 24 hours, posted in the channel; the person is told only
        when there is none."""
        outcome = await self._run(channel=channel, now=True)
        status = (outcome or {}).get("outcome")
        if status == "posted":
            return None
        if status == "empty":
            return say(language, "digest_empty")
        return say(language, "digest_failed")
