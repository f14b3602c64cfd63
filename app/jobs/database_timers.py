"""The timers as Procrastinate jobs in PostgreSQL (JOB_BACKEND=procrastinate), behind
app.jobs.backend's interface, so any number of instances on one database behave as one tomo.

What Procrastinate does, as it is meant to be used:
- A conversation's judgment or reply is a job scheduled at its time (`schedule_at`) whose
  queueing lock is its id (app.jobs.kinds.job_id): the database holds at most one waiting job
  per id, whichever instance deferred it. Moving a timer cancels the waiting job and defers a
  new one; a newer message's timer is never replaced by an older one's.
- Every instance runs a worker. A job due is taken by exactly one of them (the database's
  row lock); a new job wakes them (LISTEN/NOTIFY) and a scheduled one is found by polling
  every POLL_SECONDS.
- Periodic jobs are Procrastinate periodic tasks (a cron derived from the interval): each
  tick is deferred once for the whole fleet.
- A worker sends a heartbeat; jobs whose worker fell silent for JOB_STALLED_SECONDS (a
  SIGKILL, a lost machine) are run again by the fleet's periodic `stalled` job. A job still
  running when its instance stops (SIGTERM) is given STOP_GRACE_SECONDS, then handed back to
  the queue for another instance; the heartbeat goes on until then (app.jobs.liveness).

A cancel can race a job that has just started: the jobs themselves check that their
conversation has not moved on (app.conversation.skips), and a post is claimed once
(app.conversation.claims).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import croniter
from procrastinate import App, PsycopgConnector, RetryStrategy
from procrastinate import exceptions as queue_errors
from procrastinate.jobs import Job
from procrastinate.manager import JobManager
from sqlalchemy.engine import make_url

from app.jobs.backend import BackendName, Handler, Timer, newer, soonest_first
from app.jobs.kinds import CONVERSATION_JOBS, JobKind, job_id
from app.jobs.liveness import Keepalive, OnStalled, retry_stalled
from app.jobs.timers import STOP_GRACE_SECONDS

logger = logging.getLogger(__name__)

# The longest a scheduled job waits past its time for a worker to look (a new job that is
# due at once wakes the workers straight away).
POLL_SECONDS = 0.5
# A worker that stopped of itself is started again after this long, twice as long after
# each stop in a row (the database down), up to RESTART_MAX_SECONDS.
RESTART_SECONDS = 1.0
RESTART_MAX_SECONDS = 30.0
CONCURRENCY = 32  # jobs one instance runs at once; they hold no connection while they wait
POOL_SIZE = 8  # Procrastinate's own connections per instance (our engine has its own pool)

# The advisory lock one `stalled` check holds for the fleet while it runs. Procrastinate's retry
# asks only that a job be running, not by whom: two checks at once (a slow one and the next
# tick's, on any instance) both found a dead worker's job, the first retried it, a live worker
# took it, and the second retried it again while it ran, so the reply ran twice.
STALLED_CHECK_LOCK = 0x746F6D6F_0001  # "tomo", 1

# A job cancelled by its instance's stop is handed back (its reply is claimed once anyway);
# any other failure of ours is caught and logged by the job itself.
AFTER_STOP = RetryStrategy(
    max_attempts=5,
    retry_exceptions=[asyncio.CancelledError, queue_errors.JobAborted],  # type: ignore[list-item]
)


def libpq_url(database_url: str) -> str:
    """DATABASE_URL (any accepted form: postgres://, postgresql+asyncpg://) as libpq reads it."""
    if database_url.startswith("postgres://"):
        database_url = "postgresql://" + database_url[len("postgres://") :]
    url = make_url(database_url).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def cron_every(seconds: float) -> str:
    """A cron (seconds in a 6th column) ticking about every `seconds`: the interval rounded
    down to one that divides a minute, an hour or a day, so every tick is the same distance
    from the last; at most daily."""

    def divisor(of: int, at_most: float) -> int:
        return max(d for d in range(1, of + 1) if of % d == 0 and d <= max(1.0, at_most))

    if seconds < 60:
        return f"* * * * * */{divisor(60, seconds)}"
    if seconds < 3600:
        return f"*/{divisor(60, seconds / 60)} * * * * 0"
    if seconds < 86400:
        return f"0 */{divisor(24, seconds / 3600)} * * * 0"
    return "0 0 * * * 0"


KINDS = frozenset(kind.value for kind in JobKind)  # a job of another name is not ours


def _details(job: Job) -> dict[str, Any]:
    return dict(job.task_kwargs)


class DatabaseTimers:
    name: BackendName = "procrastinate"

    def __init__(
        self, database_url: str, *, stalled_seconds: float, on_stalled: OnStalled | None = None
    ) -> None:
        self._connector = PsycopgConnector(
            conninfo=libpq_url(database_url),
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"application_name": "tomo-jobs"},
        )
        self.app = App(connector=self._connector)
        self._stalled_seconds = stalled_seconds
        self._on_stalled = on_stalled
        self._keepalive = Keepalive(interval=stalled_seconds / 3)
        self._periodic: dict[str, str] = {}  # kind -> cron
        self._worker: asyncio.Task[None] | None = None
        self._opened = False
        self.every(
            JobKind.STALLED,
            seconds=max(1.0, stalled_seconds / 3),
            func=self.retry_stalled,
        )

    # -- what runs ---------------------------------------------------------------------------

    def handle(self, kind: JobKind, func: Handler) -> None:
        async def run(**details: Any) -> None:
            await func(**details)

        self.app.task(name=kind, pass_context=False, retry=AFTER_STOP)(run)

    def every(self, kind: JobKind, *, seconds: float, func: Callable[[], Awaitable[Any]]) -> None:
        async def run(timestamp: int) -> None:
            await func()

        cron = cron_every(seconds)
        self._periodic[kind] = cron
        task = self.app.task(name=kind, pass_context=False, queueing_lock=kind)(run)
        self.app.periodic(cron=cron, periodic_id=str(kind))(task)

    async def _manager(self) -> JobManager:
        """Procrastinate's job manager, its connections opened on first use (recovery sets
        timers before the worker starts)."""
        if not self._opened:
            await self.app.open_async()
            self._opened = True
        return self.app.job_manager

    async def start(self) -> None:
        logging.getLogger("procrastinate").setLevel(logging.WARNING)  # our jobs log themselves
        await self._manager()
        self._worker = asyncio.create_task(self._work(), name="procrastinate-worker")

    async def _work(self) -> None:
        """Procrastinate's worker, started again whenever it stops of itself; stop() cancels
        it. It stops on a failed fetch: with its row pruned by another instance's start (its
        heartbeat late: this process starved of the CPU) the job would name a worker that no
        longer exists. It also stops, without raising, when one of its side tasks fails (the
        heartbeat, the LISTEN connection: the database restarted). Either way it gives its
        running jobs their grace, hands back the rest, unregisters and stops; a new one
        registers again."""
        delay = RESTART_SECONDS
        while True:
            started = time.monotonic()
            try:
                await self.app.run_worker_async(
                    name=f"tomo@{socket.gethostname()}:{os.getpid()}",
                    concurrency=CONCURRENCY,
                    wait=True,
                    install_signal_handlers=False,  # uvicorn's, and the lifespan stops us
                    listen_notify=True,
                    fetch_job_polling_interval=POLL_SECONDS,
                    delete_jobs="always",
                    update_heartbeat_interval=self._stalled_seconds / 3,
                    stalled_worker_timeout=self._stalled_seconds,
                    shutdown_graceful_timeout=STOP_GRACE_SECONDS,
                    worker_middleware=[self._keepalive.middleware],
                )
            except queue_errors.ConnectorException:
                logger.exception("the Procrastinate worker stopped on an error; starting another")
            else:
                logger.error("the Procrastinate worker stopped (see above); starting another")
            if time.monotonic() - started > RESTART_MAX_SECONDS:
                delay = RESTART_SECONDS  # it had been working: the database is back
            await asyncio.sleep(delay)
            delay = min(delay * 2, RESTART_MAX_SECONDS)

    async def stop(self) -> None:
        """Running jobs get STOP_GRACE_SECONDS; those still running then go back to the queue.
        The worker's heartbeat goes on meanwhile: the fleet does not take it for dead."""
        worker, self._worker = self._worker, None
        if worker is not None:
            beating = asyncio.create_task(self._keepalive.beat_until(worker), name="keepalive")
            worker.cancel()
            try:
                await worker
            except asyncio.CancelledError:
                pass
            except Exception:
                logger.exception("the Procrastinate worker stopped on an error")
            await beating
        if self._opened:
            self._opened = False
            await self.app.close_async()

    @property
    def running(self) -> bool:
        return self._worker is not None and not self._worker.done()

    # -- timers ------------------------------------------------------------------------------

    async def set(
        self,
        kind: JobKind,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        replace: bool = True,
        **details: Any,
    ) -> None:
        identifier = job_id(kind, channel, thread_ts)
        arguments = {"channel": channel, "thread_ts": thread_ts, "latest_ts": latest_ts, **details}
        deferrer = self.app.configure_task(
            kind, queueing_lock=identifier, schedule_at=datetime.fromtimestamp(run_at, UTC)
        )
        for _attempt in range(5):
            jobs = await self._jobs(identifier)
            if not replace and jobs:
                return  # recovery: a waiting or running job is kept
            waiting = [job for job in jobs if job.status == "todo"]
            if any(newer(job.task_kwargs.get("latest_ts"), latest_ts) for job in waiting):
                return  # a newer message has set it meanwhile, on another instance
            for job in waiting:
                assert job.id is not None
                await (await self._manager()).cancel_job_by_id_async(job.id, delete_job=True)
            try:
                await deferrer.defer_async(**arguments)
                return
            except queue_errors.AlreadyEnqueued:
                continue  # another instance deferred it between our cancel and defer
        logger.warning("%s kept changing while it was being set; left as it is", identifier)

    async def cancel(self, kind: JobKind, *, channel: str, thread_ts: str) -> bool:
        return await self._cancel(job_id(kind, channel, thread_ts))

    async def remove(self, identifier: str) -> bool:
        if self.is_periodic(identifier):
            return False
        return await self._cancel(identifier)

    async def _cancel(self, identifier: str) -> bool:
        cancelled = False
        for job in await self._jobs(identifier):
            if job.status == "todo" and job.id is not None:
                cancelled |= await (await self._manager()).cancel_job_by_id_async(
                    job.id, delete_job=True
                )
        return cancelled

    async def get(self, kind: JobKind, *, channel: str, thread_ts: str) -> Timer | None:
        now = time.time()
        for job in await self._jobs(job_id(kind, channel, thread_ts)):
            if job.status == "todo":
                return self._timer(job, now)
        return None

    async def pending(self, channel: str, thread_ts: str) -> bool:
        for kind in CONVERSATION_JOBS:
            if await self.get(kind, channel=channel, thread_ts=thread_ts) is not None:
                return True
        return False

    def is_periodic(self, identifier: str) -> bool:
        return identifier in self._periodic

    async def list(self) -> builtins.list[Timer]:
        now = time.time()
        waiting = await (await self._manager()).list_jobs_async(status="todo")
        # Every kind of job, but a periodic one's tick (deferred when due) is listed as the
        # periodic job itself, once.
        timers = [
            self._timer(job, now)
            for job in waiting
            if job.task_name in KINDS and job.task_name not in self._periodic
        ]
        return soonest_first(timers + self._periodic_timers(now))

    async def count(self, kind: JobKind) -> int:
        jobs = await (await self._manager()).list_jobs_async(task=kind, status="todo")
        return len(list(jobs))

    async def replies_running(self) -> builtins.set[tuple[str, str]]:
        running = await (await self._manager()).list_jobs_async(task=JobKind.REPLY, status="doing")
        return {
            (str(job.task_kwargs["channel"]), str(job.task_kwargs["thread_ts"])) for job in running
        }

    async def channels_running(self, kind: JobKind) -> builtins.set[str]:
        running = await (await self._manager()).list_jobs_async(task=kind, status="doing")
        return {str(job.task_kwargs["channel"]) for job in running}

    async def _jobs(self, identifier: str) -> builtins.list[Job]:
        """The waiting and running jobs of this id (finished ones are deleted)."""
        jobs: Iterable[Job] = await (await self._manager()).list_jobs_async(
            queueing_lock=identifier
        )
        return [job for job in jobs if job.status in ("todo", "doing")]

    def _timer(self, job: Job, now: float) -> Timer:
        details = _details(job)
        run_at = job.scheduled_at
        return Timer(
            id=job.queueing_lock or f"{job.task_name}:{job.id}",
            kind=JobKind(job.task_name),
            channel=details.get("channel"),
            thread_ts=details.get("thread_ts"),
            run_at=run_at,
            seconds_left=max(0.0, run_at.timestamp() - now) if run_at else 0.0,
            latest_ts=details.get("latest_ts"),
            reason=details.get("reason"),
        )

    def _periodic_timers(self, now: float) -> builtins.list[Timer]:
        timers = []
        for kind, cron in self._periodic.items():
            if kind == JobKind.STALLED:
                continue
            tick = croniter.croniter(cron, now).get_next(float)
            timers.append(
                Timer(
                    id=kind,
                    kind=JobKind(kind),
                    channel=None,
                    thread_ts=None,
                    run_at=datetime.fromtimestamp(tick, UTC),
                    seconds_left=max(0.0, tick - now),
                    latest_ts=None,
                )
            )
        return timers

    # -- instances that died -----------------------------------------------------------------

    async def retry_stalled(self) -> None:
        """Run the jobs of dead workers again, one check at a time in the fleet: a check that
        finds another running lets it be (the next tick looks again)."""
        manager = await self._manager()
        async with self._connector.pool.connection() as connection, connection.transaction():
            cursor = await connection.execute(
                "SELECT pg_try_advisory_xact_lock(%s)", (STALLED_CHECK_LOCK,)
            )
            row = await cursor.fetchone()
            if row is None or not row[0]:
                logger.debug("another instance is looking for stalled jobs")
                return
            await retry_stalled(
                manager,
                seconds=self._stalled_seconds,
                on_stalled=self._on_stalled,
                alive=self._keepalive.worker_id,
                running=self._keepalive.running,
            )
