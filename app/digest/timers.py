"""The `digest:{channel}` timers (docs/how-tomo-works.md#digests), kept by whichever engine keeps
the timers (JOB_BACKEND), set from the schedules in the database: when a schedule is set or
changed, at start-up (and after the job worker was replaced), and by each digest for the next.

A timer that fires runs the digest where jobs run (the job worker, or inline) and sets the
timer for the schedule's next due time. The database decides what is due: a timer that fires
early, or for a schedule changed meanwhile, only sets itself again; a digest already posted is
not posted again (app.digest.runs).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.digest.schedules import all_schedules, read_schedule
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind

logger = logging.getLogger(__name__)

RETRY_SECONDS = 60.0  # a digest Slack left unsettled (or that failed on our side) is tried again

RunDigest = Callable[..., Awaitable[dict[str, Any] | None]]


class DigestTimers:
    def __init__(self, *, engine: AsyncEngine, timers: TimerBackend, run: RunDigest) -> None:
        self._engine = engine
        self._timers = timers
        self._run = run
        timers.handle(JobKind.DIGEST, self.fire)

    async def arm(self, channel: str, *, replace: bool = True, at: float | None = None) -> None:
        """The channel's timer at its schedule's next due time (or `at`); none without one.
        With replace=False a pending or running one is kept (what start-up sets)."""
        async with self._engine.connect() as connection:
            schedule = await read_schedule(connection, channel)
        if schedule is None:
            await self.drop(channel)
            return
        await self._timers.set(
            JobKind.DIGEST,
            channel=channel,
            thread_ts="",
            run_at=at if at is not None else max(time.time(), schedule.next_due_at),
            # The moment it was set: a later setting always replaces an earlier one.
            latest_ts=f"{time.time():.6f}",
            replace=replace,
        )

    async def drop(self, channel: str) -> None:
        await self._timers.cancel(JobKind.DIGEST, channel=channel, thread_ts="")

    async def restore(self) -> int:
        """Every schedule's timer, kept where one is pending or running (another instance's)."""
        async with self._engine.connect() as connection:
            schedules = await all_schedules(connection)
        for schedule in schedules:
            await self.arm(schedule.channel, replace=False)
        if schedules:
            logger.info("restored %d digest timer(s)", len(schedules))
        return len(schedules)

    async def fire(self, *, channel: str, **_: Any) -> None:
        """The timer is due: the digest, then the timer for the next one."""
        outcome = await self._run(channel=channel)
        if outcome is None:
            return  # the job worker went away: its restart sets the timers again
        async with self._engine.connect() as connection:
            schedule = await read_schedule(connection, channel)
        if schedule is None:
            return
        if schedule.next_due_at > time.time():
            await self.arm(channel)
        elif outcome.get("outcome") == "retry":
            await self.arm(channel, at=time.time() + RETRY_SECONDS)
        # Held: the run that holds the claim moves the schedule on and sets the timer.
