"""Which instances of the fleet are alive, as Procrastinate's worker heartbeats say
(docs/how-tomo-works.md#several-instances): the jobs of a dead one are run again, and a stopping
one stays alive until its jobs are done or handed back.

The fleet takes an instance for dead when its Procrastinate worker's heartbeat is older than
JOB_STALLED_SECONDS, and runs its jobs again (app.jobs.queue.Queue.retry_stalled). Asked to
stop, Procrastinate's worker cancels its side tasks, the heartbeat among them, and only then
gives its running jobs the graceful timeout: with a stall time shorter than that grace, the
fleet would run a job again while its runner still works on it (procrastinate-org/procrastinate
pull request 1585 proposes the same change upstream). Its heartbeat is sent on here, with
Procrastinate's own `update_heartbeat`, from the stop's start until the worker has unregistered,
which it does once every job has finished or been handed back to the queue.

The worker is learnt from the worker middleware, which Procrastinate calls around each job with
it: a worker that never ran a job has nothing to hand back, and no heartbeat to keep. The
middleware also keeps the ids of the jobs running here: a worker row that another instance's
start pruned (its heartbeat late: this process starved of the CPU) leaves them with no worker
id, which the stalled check takes for a dead worker's, and this process would run them twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from procrastinate import exceptions as queue_errors
from procrastinate.job_context import JobContext
from procrastinate.jobs import Job, Status
from procrastinate.manager import JobManager
from procrastinate.middleware import AsyncCallNext
from procrastinate.worker import Worker

from app.jobs.kinds import CHANNEL_JOBS, JobKind

logger = logging.getLogger(__name__)

OnStalled = Callable[[JobKind, dict[str, Any]], Awaitable[None]]


class Keepalive:
    def __init__(self, *, interval: float) -> None:
        self._interval = interval
        self._worker: Worker | None = None
        self.running: set[int] = set()  # the ids of the jobs running in this process

    async def middleware(
        self, call_next: AsyncCallNext, context: JobContext, worker: Worker
    ) -> Any:
        """Procrastinate's worker middleware: it learns which worker runs the jobs, and which
        jobs run here."""
        self._worker = worker
        job_id = context.job.id
        if job_id is None:
            return await call_next()
        self.running.add(job_id)
        try:
            return await call_next()
        finally:
            self.running.discard(job_id)

    @property
    def worker_id(self) -> int | None:
        """This process's worker, once it has run a job (the `stalled` check is one)."""
        return self._worker.worker_id if self._worker is not None else None

    async def beat_until(self, stopped: asyncio.Future[Any]) -> None:
        """Send the worker's heartbeat every interval until `stopped` (the worker's run) ends;
        a beat after it has unregistered updates nothing."""
        while not stopped.done():
            worker = self._worker
            worker_id = worker.worker_id if worker is not None else None
            if worker is not None and worker_id is not None:
                try:
                    await worker.app.job_manager.update_heartbeat(worker_id)
                except Exception as error:  # the next beat tries again
                    logger.warning("the stopping worker's heartbeat failed: %s", error)
            await asyncio.wait({stopped}, timeout=self._interval)


async def retry_stalled(
    manager: JobManager,
    *,
    seconds: float,
    on_stalled: OnStalled | None,
    alive: int | None,
    running: Collection[int] = (),
) -> None:
    """Jobs left running by a worker whose heartbeat is older than `seconds` (a
    SIGKILL, a lost machine), or that has unregistered, run again; a conversation job's
    `on_stalled` comes first (a reply's claim is handed back, so the retry can take it over).
    `alive`: the worker running this check, alive whatever its heartbeat says: a process
    starved of the CPU for longer than `seconds` may run this before its late heartbeat, and
    would run its own running jobs a second time. `running`: the jobs running in this process,
    whatever worker the database gives them (none, once another instance pruned its row)."""
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=seconds):
        if (alive is not None and job.worker_id == alive) or job.id in running:
            continue
        await _retry(manager, job, on_stalled)


async def _retry(manager: JobManager, job: Job, on_stalled: OnStalled | None) -> None:
    name = job.queueing_lock or job.task_name
    if job.task_name in CHANNEL_JOBS and on_stalled is not None:
        await on_stalled(JobKind(job.task_name), dict(job.task_kwargs))
    try:
        await manager.retry_job(job)
    except queue_errors.UniqueViolation:
        # A newer job of the same id waits already: it does this one's work.
        logger.info("%s was left running by a silent instance; a newer one waits", name)
        with contextlib.suppress(queue_errors.ConnectorException):  # gone meanwhile
            await manager.finish_job(job, status=Status.FAILED, delete_job=True)
    except queue_errors.ConnectorException as error:
        # It is no longer running: it finished, or went back to the queue, meanwhile.
        logger.info("%s is no longer left running: %s", name, error)
    else:
        logger.warning("%s was left running by a silent instance; running it again", name)
