"""The default timers (JOB_BACKEND=apscheduler): an APScheduler 3 AsyncIOScheduler with an
in-memory job store (app.jobs.timer_store), behind app.jobs.backend's interface.

Judgment and reply jobs are keyed by conversation (`judgment:{channel}:{thread_ts}`,
`reply:{channel}:{thread_ts}`, thread_ts "" at the top level) and replaced by id. The store is
a cache: the database stays the truth and `app.conversation.timing.recovery` rebuilds it at
start-up.
One process holds them, so one instance of tomo runs.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.job import Job
from apscheduler.jobstores.base import JobLookupError
from apscheduler.triggers.date import DateTrigger

from app.jobs.backend import BackendName, Handler, Timer, newer, soonest_first
from app.jobs.kinds import CONVERSATION_JOBS, JobKind, job_id
from app.jobs.timer_store import TimerScheduler, TimerStore

logger = logging.getLogger(__name__)

# How long a SIGTERM waits for running jobs (a reply being written) before cancelling them;
# Cloud Run allows 10 s after SIGTERM, Heroku 30 s.
STOP_GRACE_SECONDS = 8.0


JOB_DEFAULTS: dict[str, Any] = {
    "misfire_grace_time": None,  # a late timer still runs
    "coalesce": True,
    # Jobs of one conversation serialise on their own lock; a replaced job must be able to
    # start while the previous run of the same id is still finishing.
    "max_instances": 16,
}


class Timers:
    name: BackendName = "apscheduler"

    def __init__(self) -> None:
        # The store is held here too: the ack path looks jobs up and moves them in it directly,
        # once the scheduler runs (before that, APScheduler keeps added jobs aside).
        self._store = TimerStore()
        self.scheduler = TimerScheduler(
            timezone=UTC,
            jobstores={"default": self._store},
            job_defaults=JOB_DEFAULTS,
        )
        self._running: set[asyncio.Task[Any]] = set()
        self._periodic: set[str] = set()  # ids of the jobs `every` added
        self._handlers: dict[JobKind, Handler] = {}

    def handle(self, kind: JobKind, func: Handler) -> None:
        self._handlers[kind] = func

    async def start(self) -> None:
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
    def running_jobs(self) -> builtins.set[asyncio.Task[Any]]:
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

    async def set(
        self,
        kind: JobKind,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        replace: bool = True,
        **kwargs: Any,
    ) -> None:
        """Schedule (or replace) the conversation's job of this kind at `run_at` (epoch s)."""
        identifier = job_id(kind, channel, thread_ts)
        func = self._handlers[kind]
        details = {"channel": channel, "thread_ts": thread_ts, "latest_ts": latest_ts, **kwargs}
        run_date = datetime.fromtimestamp(run_at, UTC)
        trigger = DateTrigger(run_date, timezone=UTC)
        pending = self._store.lookup_job(identifier) if self.running else None
        held = pending or (None if self.running else self.scheduler.get_job(identifier))
        if held is not None and (not replace or newer(held.kwargs.get("latest_ts"), latest_ts)):
            return
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
        if pending is None and self.running:
            # A new conversation's timer goes into the store the same way, with the same wake-up
            # rule: add_job would also wake the scheduler every time (no listener waits for its
            # "job added" event).
            earliest = self._store.get_next_run_time()
            job = Job(
                self.scheduler,
                id=identifier,
                func=self._run,
                args=(func,),
                kwargs=details,
                name=kind,
                trigger=trigger,
                executor="default",
                next_run_time=run_date,
                **JOB_DEFAULTS,
            )
            self._store.add_job(job)
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

    async def cancel(self, kind: JobKind, *, channel: str, thread_ts: str) -> bool:
        return self._remove(job_id(kind, channel, thread_ts))

    async def remove(self, identifier: str) -> bool:
        return self._remove(identifier)

    def _remove(self, identifier: str) -> bool:
        """Cancel a judgment or reply timer; False when there is none. Periodic jobs (memory,
        prune, directory) are never removed: nothing would add them back before a restart."""
        if identifier in self._periodic:
            return False
        if self.running and self._store.lookup_job(identifier) is None:
            return False  # most messages cancel a timer that is not there: no exception raised
        try:
            self.scheduler.remove_job(identifier)
        except JobLookupError:
            return False
        return True

    async def pending(self, channel: str, thread_ts: str) -> bool:
        """Whether the conversation has a judgment or a reply timer waiting."""
        return any(self._job(job_id(kind, channel, thread_ts)) for kind in CONVERSATION_JOBS)

    async def get(self, kind: JobKind, *, channel: str, thread_ts: str) -> Timer | None:
        job = self._job(job_id(kind, channel, thread_ts))
        return None if job is None else _timer(job, time.time())

    def _job(self, identifier: str) -> Job | None:
        if self.running:
            return self._store.lookup_job(identifier)  # type: ignore[no-any-return]
        return self.scheduler.get_job(identifier)

    def is_periodic(self, identifier: str) -> bool:
        return identifier in self._periodic

    def every(self, kind: JobKind, *, seconds: float, func: Callable[[], Awaitable[Any]]) -> None:
        name = kind
        self._periodic.add(name)
        self.scheduler.add_job(
            self._run,
            args=[func],
            trigger="interval",
            seconds=seconds,
            id=name,
            name=name,
            replace_existing=True,
        )

    async def list(self) -> builtins.list[Timer]:
        return self.timers()

    def timers(self) -> builtins.list[Timer]:
        """What `list` answers, without a turn of the event loop (the replay's clock)."""
        now = time.time()
        return soonest_first([_timer(job, now) for job in self.scheduler.get_jobs()])

    async def count(self, kind: JobKind) -> int:
        if self.scheduler.running:  # every job is in the store, which counts them by name
            return self._store.count(kind)
        return sum(1 for job in self.scheduler.get_jobs() if job.name == kind)

    async def replies_running(self) -> builtins.set[tuple[str, str]]:
        # Only this process runs them, and it asks before any has started.
        return set()

    async def channels_running(self, kind: JobKind) -> builtins.set[str]:
        return set()  # as replies_running


def _timer(job: Job, now: float) -> Timer:
    run_at: datetime | None = getattr(job, "next_run_time", None)
    reason = job.kwargs.get("reason")
    return Timer(
        id=job.id,
        kind=JobKind(job.name),
        channel=job.kwargs.get("channel"),
        thread_ts=job.kwargs.get("thread_ts"),
        run_at=run_at,
        seconds_left=max(0.0, run_at.timestamp() - now) if run_at else None,
        latest_ts=job.kwargs.get("latest_ts"),
        reason=str(reason) if reason is not None else None,
    )
