"""The job store and scheduler under the timers (app.jobs.timers): APScheduler 3's memory job
store and AsyncIOScheduler, made cheap enough for a timer set on every acknowledgement."""

from __future__ import annotations

import asyncio
import bisect
from collections import Counter
from datetime import datetime

from apscheduler.job import Job
from apscheduler.jobstores.base import BaseJobStore, ConflictingIdError, JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler


def _timestamp(when: datetime | None) -> float:
    return float("inf") if when is None else when.timestamp()  # a paused job comes last


class TimerStore(BaseJobStore):  # type: ignore[misc]
    """APScheduler's memory job store, with its bookkeeping in C: jobs by id in a dict, their
    order a sorted list of (epoch seconds, id) kept with bisect. MemoryJobStore bisects in
    Python and converts every time through a time tuple, a twentieth of an acknowledgement
    when each message moves its conversation's timer. It counts its jobs by name as they come
    and go, so that `GET /metrics` (every few seconds) does not walk thousands of timers on the
    event loop that acknowledges events."""

    def __init__(self) -> None:
        super().__init__()
        self._jobs: dict[str, tuple[Job, float, str]] = {}  # the job, its time, its name
        self._order: list[tuple[float, str]] = []
        self._names: Counter[str] = Counter()

    def count(self, name: str) -> int:
        """The jobs held of this name."""
        return self._names[name]

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
        self._jobs[job.id] = (job, timestamp, job.name)
        self._names[job.name] += 1
        job._jobstore_alias = self._alias  # as APScheduler's own stores do for the jobs they hold

    def update_job(self, job: Job) -> None:
        entry = self._jobs.get(job.id)
        if entry is None:
            raise JobLookupError(job.id)
        timestamp = _timestamp(job.next_run_time)
        if timestamp != entry[1]:
            del self._order[bisect.bisect_left(self._order, (entry[1], job.id))]
            bisect.insort(self._order, (timestamp, job.id))
        if job.name != entry[2]:  # renamed (APScheduler's modify_job changes the job in place)
            self._names[entry[2]] -= 1
            self._names[job.name] += 1
        self._jobs[job.id] = (job, timestamp, job.name)

    def remove_job(self, job_id: str) -> None:
        entry = self._jobs.pop(job_id, None)
        if entry is None:
            raise JobLookupError(job_id)
        del self._order[bisect.bisect_left(self._order, (entry[1], job_id))]
        self._names[entry[2]] -= 1

    def remove_all_jobs(self) -> None:
        self._jobs.clear()
        self._order.clear()
        self._names.clear()

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
