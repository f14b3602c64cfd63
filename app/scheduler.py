"""The timers: an APScheduler 3 AsyncIOScheduler with an in-memory job store of our own.

Judgment and reply jobs are keyed by conversation (`judgment:{channel}:{thread_ts}`,
`reply:{channel}:{thread_ts}`, thread_ts "" at the top level) and replaced by id. The store is
a cache: the database stays the truth and `app.services.recovery` rebuilds it at start-up.
"""

from __future__ import annotations

import asyncio
import bisect
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from apscheduler.job import Job
from apscheduler.jobstores.base import BaseJobStore, ConflictingIdError, JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger

logger = logging.getLogger(__name__)

JUDGMENT = "judgment"
REPLY = "reply"
# How long a SIGTERM waits for running jobs (a reply being written) before cancelling them;
# Cloud Run allows 10 s after SIGTERM, Heroku 30 s.
STOP_GRACE_SECONDS = 8.0


def job_id(kind: str, channel: str, thread_ts: str) -> str:
    return f"{kind}:{channel}:{thread_ts}"


@dataclass(frozen=True)
class Timer:
    id: str
    kind: str
    channel: str | None
    thread_ts: str | None
    run_at: datetime | None
    seconds_left: float | None
    latest_ts: str | None


def _timestamp(when: datetime | None) -> float:
    return float("inf") if when is None else when.timestamp()  # a paused job comes last


class TimerStore(BaseJobStore):  # type: ignore[misc]
    """APScheduler's memory job store, with its bookkeeping in C: jobs by id in a dict, their
    order a sorted list of (epoch seconds, id) kept with bisect. MemoryJobStore bisects in
    Python and converts every time through a time tuple, a twentieth of an acknowledgement
    when each message moves its conversation's timer."""

    def __init__(self) -> None:
        super().__init__()
        self._jobs: dict[str, tuple[Job, float]] = {}
        self._order: list[tuple[float, str]] = []

    def lookup_job(self, job_id: str) -> Job | None:
        entry = self._jobs.get(job_id)
        return entry[0] if entry is not None else None

    def get_due_jobs(self, now: datetime) -> list[Job]:
        limit = now.timestamp()
        due = []
        for timestamp, identifier in self._order:
            if timestamp > limit:
                break
            due.append(self._jobs[identifier][0])
        return due

    def get_next_run_time(self) -> datetime | None:
        return self._jobs[self._order[0][1]][0].next_run_time if self._order else None

    def get_all_jobs(self) -> list[Job]:
        return [self._jobs[identifier][0] for _, identifier in self._order]

    def add_job(self, job: Job) -> None:
        if job.id in self._jobs:
            raise ConflictingIdError(job.id)
        timestamp = _timestamp(job.next_run_time)
        bisect.insort(self._order, (timestamp, job.id))
        self._jobs[job.id] = (job, timestamp)

    def update_job(self, job: Job) -> None:
        entry = self._jobs.get(job.id)
        if entry is None:
            raise JobLookupError(job.id)
        timestamp = _timestamp(job.next_run_time)
        if timestamp != entry[1]:
            del self._order[bisect.bisect_left(self._order, (entry[1], job.id))]
            bisect.insort(self._order, (timestamp, job.id))
        self._jobs[job.id] = (job, timestamp)

    def remove_job(self, job_id: str) -> None:
        entry = self._jobs.pop(job_id, None)
        if entry is None:
            raise JobLookupError(job_id)
        del self._order[bisect.bisect_left(self._order, (entry[1], job_id))]

    def remove_all_jobs(self) -> None:
        self._jobs.clear()
        self._order.clear()

    def shutdown(self) -> None:
        self.remove_all_jobs()


class TimerScheduler(AsyncIOScheduler):  # type: ignore[misc]
    """APScheduler's AsyncIOScheduler with its wake-ups coalesced. Every timer added on the ack
    path asks for one, each a write to the loop's self-pipe and a pass over the job store; here
    the requests of one loop iteration share a pass, scheduled without the self-pipe when they
    come from the loop's own thread."""

    _wakeup_pending = False

    def wakeup(self) -> None:
        if self._wakeup_pending:
            return
        self._wakeup_pending = True
        loop = self._eventloop
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:
            here = False
        if here:
            loop.call_soon(self._wake)
        else:
            loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        self._wakeup_pending = False  # first: a request from now on gets a pass of its own
        if self._eventloop is None:  # shut down meanwhile
            return
        self._stop_timer()
        self._start_timer(self._process_jobs())


class Timers:
    def __init__(self) -> None:
        # The store is held here too: the ack path looks jobs up and moves them in it directly,
        # once the scheduler runs (before that, APScheduler keeps added jobs aside).
        self._store = TimerStore()
        self.scheduler = TimerScheduler(
            timezone=UTC,
            jobstores={"default": self._store},
            job_defaults={
                "misfire_grace_time": None,  # a late timer still runs
                "coalesce": True,
                # Jobs of one conversation serialise on their own lock; a replaced job must be
                # able to start while the previous run of the same id is still finishing.
                "max_instances": 16,
            },
        )
        self._running: set[asyncio.Task[Any]] = set()

    def start(self) -> None:
        self.scheduler.start()

    def shutdown(self) -> None:
        """Stop at once: jobs still running are cancelled."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)

    async def stop(self, *, grace: float = STOP_GRACE_SECONDS) -> None:
        """Start no new job, give the running ones `grace` seconds to finish, then shut down.
        Timers not yet due are simply dropped: the database brings them back at start-up."""
        if not self.scheduler.running:
            return
        self.scheduler.pause()
        if self._running:
            logger.info("waiting up to %.0f s for %d running job(s)", grace, len(self._running))
            _done, late = await asyncio.wait(set(self._running), timeout=grace)
            if late:
                logger.warning("cancelling %d job(s) still running after %.0f s", len(late), grace)
        self.shutdown()

    @property
    def running_jobs(self) -> set[asyncio.Task[Any]]:
        return set(self._running)

    async def _run(self, func: Callable[..., Awaitable[Any]], /, **kwargs: Any) -> None:
        # Every job runs through this coroutine function: APScheduler awaits only coroutine
        # functions (a lambda returning a coroutine would run on a thread, never awaited),
        # and a stop knows what is still running.
        task = asyncio.current_task()
        if task is not None:
            self._running.add(task)
        try:
            await func(**kwargs)
        finally:
            if task is not None:
                self._running.discard(task)

    # APScheduler checks a new job's arguments against its function's signature, which inspect
    # would rebuild for every new conversation; a function's __signature__ is used as it is.
    _run.__signature__ = inspect.signature(_run)  # type: ignore[attr-defined]

    @property
    def running(self) -> bool:
        return bool(self.scheduler.running)

    def set(
        self,
        kind: str,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        func: Callable[..., Awaitable[Any]],
        latest_ts: str,
        **kwargs: Any,
    ) -> None:
        """Schedule (or replace) the conversation's job of this kind at `run_at` (epoch s)."""
        identifier = job_id(kind, channel, thread_ts)
        details = {"channel": channel, "thread_ts": thread_ts, "latest_ts": latest_ts, **kwargs}
        run_date = datetime.fromtimestamp(run_at, UTC)
        trigger = DateTrigger(run_date, timezone=UTC)
        pending = self._store.lookup_job(identifier) if self.running else None
        if pending is not None and pending.args == (func,) and pending.next_run_time is not None:
            # Moving a pending timer, as every message of a busy conversation does, in the
            # store itself: modify_job would validate every field again and wake the scheduler,
            # together a sixth of an acknowledgement. The scheduler's next wake-up is never
            # later than the earliest timer in the store, so a timer moved to that time or
            # later needs none (at worst the scheduler wakes early, finds nothing due and
            # sleeps on).
            earliest = self._store.get_next_run_time()
            pending.kwargs = details
            pending.trigger = trigger
            pending.next_run_time = run_date
            self._store.update_job(pending)
            if earliest is None or run_date < earliest:
                self.scheduler.wakeup()
            return
        self.scheduler.add_job(
            self._run,
            args=[func],
            trigger=trigger,
            id=identifier,
            name=kind,
            replace_existing=True,
            kwargs=details,
        )

    def cancel(self, kind: str, *, channel: str, thread_ts: str) -> bool:
        return self.remove(job_id(kind, channel, thread_ts))

    def remove(self, identifier: str) -> bool:
        if self.running and self._store.lookup_job(identifier) is None:
            return False  # most messages cancel a timer that is not there: no exception raised
        try:
            self.scheduler.remove_job(identifier)
        except JobLookupError:
            return False
        return True

    def pending(self, channel: str, thread_ts: str) -> bool:
        """Whether the conversation has a judgment or a reply timer waiting."""
        return any(
            self.get(kind, channel=channel, thread_ts=thread_ts) for kind in (JUDGMENT, REPLY)
        )

    def get(self, kind: str, *, channel: str, thread_ts: str) -> Job | None:
        identifier = job_id(kind, channel, thread_ts)
        if self.running:
            return self._store.lookup_job(identifier)  # type: ignore[no-any-return]
        return self.scheduler.get_job(identifier)

    def every(self, name: str, *, seconds: float, func: Callable[[], Awaitable[Any]]) -> None:
        self.scheduler.add_job(
            self._run,
            args=[func],
            trigger="interval",
            seconds=seconds,
            id=name,
            name=name,
            replace_existing=True,
        )

    def list(self) -> list[Timer]:
        now = time.time()
        timers = []
        for job in self.scheduler.get_jobs():
            run_at: datetime | None = getattr(job, "next_run_time", None)
            left = max(0.0, run_at.timestamp() - now) if run_at else None
            timers.append(
                Timer(
                    id=job.id,
                    kind=job.name,
                    channel=job.kwargs.get("channel"),
                    thread_ts=job.kwargs.get("thread_ts"),
                    run_at=run_at,
                    seconds_left=left,
                    latest_ts=job.kwargs.get("latest_ts"),
                )
            )
        return sorted(timers, key=lambda t: t.run_at.timestamp() if t.run_at else float("inf"))

    def count(self, kind: str) -> int:
        return sum(1 for job in self.scheduler.get_jobs() if job.name == kind)
