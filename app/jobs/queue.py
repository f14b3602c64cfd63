"""The Procrastinate app behind the database timers (app.jobs.database_timers): its connections
to PostgreSQL, opened on first use; its worker, which every instance runs and starts again
whenever it stops of itself; and the fleet's check for the jobs of instances that died, one
check at a time (app.jobs.liveness says which are alive).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time

from procrastinate import App, PsycopgConnector, RetryStrategy
from procrastinate import exceptions as queue_errors
from procrastinate.manager import JobManager
from sqlalchemy.engine import make_url

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


class Queue:
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
        self._worker: asyncio.Task[None] | None = None
        self._opened = False

    async def manager(self) -> JobManager:
        """Procrastinate's job manager, its connections opened on first use (recovery sets
        timers before the worker starts)."""
        if not self._opened:
            await self.app.open_async()
            self._opened = True
        return self.app.job_manager

    async def start(self) -> None:
        logging.getLogger("procrastinate").setLevel(logging.WARNING)  # our jobs log themselves
        await self.manager()
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

    async def retry_stalled(self) -> None:
        """Run the jobs of dead workers again, one check at a time in the fleet: a check that
        finds another running lets it be (the next tick looks again)."""
        manager = await self.manager()
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
