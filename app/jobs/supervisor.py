"""The job worker's parent side: judgment, reply and memory jobs run in a process of their own.

A reply costs tens of milliseconds of CPU (its context, LiteLLM, slack-sdk); on the event loop
that acknowledges Slack's events it would hold up every acknowledgement behind it. With
`JOB_WORKER=process` (the default) the timers stay here, in the one process that owns the
scheduler, and each job that fires is handed to a child process (`python -m app.wiring.worker`)
that has its own engine, Slack client and LiteLLM, and runs at a lower CPU priority: when
the CPU is short, acknowledgements win. The two talk over a socket pair (app.jobs.protocol;
the process itself and its watchdog: app.jobs.worker_process).

The child exits when the socket closes, so it never outlives its parent. If it dies, the jobs it
was running fail here, a new child starts, and the timers are restored from the database
(`on_restart`), as after a restart of the whole service. If it hangs instead (its event loop
blocked: it answers nothing, not even a ping, for JOB_WORKER_TIMEOUT_SECONDS), it is killed,
and the same follows.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from app.db.models import Judgment
from app.jobs.kinds import JobKind
from app.jobs.protocol import Op, encode, lines
from app.jobs.worker_process import WorkerProcess, spawn, watch
from app.settings import Settings
from app.slack.identity import Identity

logger = logging.getLogger(__name__)

STOP_WAIT_SECONDS = 5.0
RESTART_DELAYS = (0.5, 1.0, 2.0, 5.0, 15.0, 30.0)


async def _nothing() -> None:
    return None


class WorkerError(Exception):
    """A job did not complete in the worker: it failed there, or the worker went away."""


class WorkerJobs:
    """Runs jobs in the child process; the methods are what the timers call."""

    def __init__(self, settings: Settings, identity: Identity) -> None:
        self._settings = settings
        self._identity = identity
        # What a restarted worker's jobs are owed again (app.wiring.owed): set by the wiring
        # once what it restores is built, since those timers call this supervisor.
        self.on_restart: Callable[[], Awaitable[Any]] = _nothing
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._worker: WorkerProcess | None = None
        self._connected = asyncio.Event()
        self._supervisor: asyncio.Task[None] | None = None
        self._stopping = False
        self._heard_at: float | None = None  # the current worker's last line; None: not yet
        self._loaded = False  # the current worker has said its libraries are loaded
        # What the worker found of the model key once loaded (app.llm.model_keys): `ok` or why not.
        self.model_key: str | None = None
        self.restarts = 0
        self.metrics_directory: Path | None = (
            None  # where the worker counts (app.observability.metrics)
        )

    @property
    def pid(self) -> int | None:
        return self._worker.process.pid if self._worker is not None else None

    @property
    def alive(self) -> bool:
        return self._connected.is_set()

    @property
    def answering(self) -> bool:
        """The current worker has answered since it started (it is past its imports)."""
        return self.alive and self._heard_at is not None

    @property
    def loaded(self) -> bool:
        """The current worker has its libraries (LiteLLM) loaded: work sent there now is not
        slowed by an import holding its interpreter."""
        return self.alive and self._loaded

    @property
    def waiting_for(self) -> str | None:
        if not self.alive:
            return "the job worker process is starting"
        if not self._loaded:
            return "the job worker is still importing LiteLLM and slack-sdk"
        return None

    @property
    def shows_on_it(self) -> bool:
        """Once loaded, the worker puts a reply's "on it" sign up itself."""
        return self.loaded

    def start(self) -> None:
        """Start the worker in the background (start-up does not wait for its imports); jobs
        wait until it is connected."""
        self._supervisor = asyncio.create_task(self._supervise(), name="job-worker")

    async def stop(self) -> None:
        """Close the socket (the worker cancels what still runs and exits), then wait for it."""
        self._stopping = True
        self._connected.clear()
        if self._worker is not None:
            self._worker.writer.close()
        process = self._worker.process if self._worker is not None else None
        if process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(process.wait(), STOP_WAIT_SECONDS)
            except TimeoutError:
                logger.warning("job worker %d did not stop; killing it", process.pid)
                process.kill()
                await process.wait()
        if self._supervisor is not None:
            self._supervisor.cancel()
            await asyncio.gather(self._supervisor, return_exceptions=True)
        self._fail_pending("tomo is stopping")

    # -- what the timers call ---------------------------------------------------------------

    async def judgment(self, **job: Any) -> Judgment | None:
        decision = await self._job(JobKind.JUDGMENT, job)
        return Judgment.model_validate(decision) if decision else None

    async def reply(self, **job: Any) -> list[str]:
        return list(await self._job(JobKind.REPLY, job) or [])

    async def memory(self, **job: Any) -> None:
        await self._job(JobKind.MEMORY, job)

    async def approval(self, **job: Any) -> float | None:
        again = await self._job(JobKind.APPROVAL, job)
        return float(again) if again is not None else None

    async def digest(self, **job: Any) -> dict[str, Any] | None:
        outcome = await self._job(JobKind.DIGEST, job)
        return dict(outcome) if isinstance(outcome, dict) else None

    async def _job(self, kind: str, job: dict[str, Any]) -> Any:
        try:
            return await self.run(kind, job)
        except WorkerError as error:
            # The restart restores the timers from the database: this job comes back if owed.
            logger.error("%s job lost: %s", kind, error)
            return None

    async def run(self, kind: str, kwargs: dict[str, Any]) -> Any:
        """Run one job in the worker and return its result; cancelling this cancels it there."""
        await self._identity.known.wait()  # the worker learns who tomo is from each job
        await self._connected.wait()
        identifier = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[identifier] = future
        me = self._identity.snapshot()
        try:
            self._send({"op": Op.RUN, "id": identifier, "kind": kind, "kwargs": kwargs, "me": me})
            # Shielded: a cancelled job still hears how it ended there.
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            with contextlib.suppress(WorkerError):  # a worker gone has nothing to cancel
                self._send({"op": Op.CANCEL, "id": identifier})
                # This job ends (and may be handed back to the queue) once it has stopped
                # there: a reply's claim is owed by then, for whoever runs it again.
                await asyncio.wait({future}, timeout=STOP_WAIT_SECONDS)
            if future.done() and not future.cancelled():
                future.exception()  # its end is this cancellation
            raise
        finally:
            self._pending.pop(identifier, None)

    def _send(self, message: dict[str, Any]) -> None:
        if self._worker is None or self._worker.writer.is_closing():
            raise WorkerError("the worker is not running")
        self._worker.writer.write(encode(message))

    # -- the child process ----------------------------------------------------------------

    async def _spawn(self) -> None:
        self._worker = await spawn(self._settings, metrics_directory=self.metrics_directory)
        self._heard_at = None
        self._loaded = False
        self._connected.set()
        logger.info("job worker started (pid %d)", self._worker.process.pid)

    async def _supervise(self) -> None:
        """Start the worker, and a new one whenever it exits, until tomo stops."""
        delays = iter(RESTART_DELAYS)
        lost = False  # a worker went away: jobs may have been cut short
        while not self._stopping:
            started = time.monotonic()
            try:
                await self._spawn()
            except Exception:
                logger.exception("could not start a job worker")
            else:
                if lost:
                    self.restarts += 1
                    await self._restore()
                worker = self._worker
                assert worker is not None
                watchdog = asyncio.create_task(self._watch(worker), name="job-watchdog")
                try:
                    await self._pump(worker.reader)
                finally:
                    watchdog.cancel()
                self._connected.clear()
                worker.writer.close()
                code = await worker.process.wait()
                self._fail_pending(f"the worker exited with status {code}")
                if self._stopping:
                    return
                lost = True
                logger.error("job worker exited with status %s", code)
            if time.monotonic() - started > 60:
                delays = iter(RESTART_DELAYS)  # it had been running fine: restart promptly
            await asyncio.sleep(next(delays, RESTART_DELAYS[-1]))

    async def _restore(self) -> None:
        try:
            await self.on_restart()
        except Exception:
            logger.exception("restoring the timers after the worker's restart failed")

    async def _watch(self, worker: WorkerProcess) -> None:
        def ping() -> None:
            with contextlib.suppress(WorkerError):
                self._send({"op": Op.PING, "id": 0})

        await watch(
            worker.process,
            timeout=self._settings.JOB_WORKER_TIMEOUT_SECONDS,
            ping=ping,
            heard_at=lambda: self._heard_at,
        )

    async def _pump(self, reader: asyncio.StreamReader) -> None:
        """Deliver the worker's answers until its end of the socket closes."""
        async for line in lines(reader):
            self._heard_at = time.monotonic()
            try:
                message = json.loads(line)
                future = self._pending.get(message["id"])
            except (ValueError, KeyError, TypeError):
                logger.error("unreadable line from the job worker: %r", line[:200])
                continue
            if message.get("op") == Op.LOADED:
                self._loaded = True
                self.model_key = message.get("model_key") or self.model_key
                logger.info("job worker %s has loaded its libraries: ready to reply", self.pid)
                continue
            if future is None or future.done():
                continue
            if message.get("op") == Op.DONE:
                future.set_result(message.get("result"))
            elif message.get("op") == Op.CANCELLED:
                future.set_result(None)
            else:
                future.set_exception(WorkerError(f"failed in the worker: {message.get('error')}"))

    def _fail_pending(self, why: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(WorkerError(why))
