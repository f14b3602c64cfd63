"""The job worker process: `python -m app.wiring.worker FD`, started and supervised by the web
process
(app.jobs.supervisor, which also lowers its CPU priority).

It builds only what jobs need (app.wiring.core with the job services: its own engine, Slack client
and
LiteLLM), runs the judgment, reply and memory jobs its parent sends over the socket FD
(app.jobs.child), and answers each with its result. It ignores SIGTERM and SIGINT, which Heroku
and a terminal send to the whole process group: the parent decides when jobs stop (it gives
running ones a grace period), and the worker exits once the parent closes the socket, or dies.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from app.db.engine import create_engine
from app.jobs.backend import Handler
from app.jobs.child import Child
from app.jobs.kinds import JobKind
from app.jobs.protocol import Op, encode
from app.llm.model_keys import check_model_key
from app.observability import metrics
from app.observability.logs import setup_logging
from app.settings import load_settings
from app.wiring.core import build_core, load_job_libraries
from app.wiring.job_services import JobServices

logger = logging.getLogger(__name__)

# A few jobs at a time: PostgreSQL plans with 20 connections keep room for the web process.
CONNECTIONS = 4


def _handlers(services: JobServices) -> Mapping[JobKind, Handler]:
    """The services' handlers, with results the socket can carry."""
    handlers = services.handlers()

    async def judgment(**job: Any) -> dict[str, Any] | None:
        decision = await handlers[JobKind.JUDGMENT](**job)
        return decision.model_dump() if decision is not None else None

    async def memory(**job: Any) -> None:
        await handlers[JobKind.MEMORY](**job)

    return {
        JobKind.JUDGMENT: judgment,
        JobKind.REPLY: handlers[JobKind.REPLY],
        JobKind.MEMORY: memory,
        JobKind.APPROVAL: handlers[JobKind.APPROVAL],
        JobKind.DIGEST: handlers[JobKind.DIGEST],
    }


async def _tell_when_loaded(
    writer: asyncio.StreamWriter, model_key: asyncio.Task[str], *imports: asyncio.Task[None]
) -> None:
    """Once the imports are done: `loaded`, with what the model key check found."""
    await asyncio.wait([model_key, *imports])
    if not writer.is_closing():
        writer.write(encode({"op": Op.LOADED, "id": 0, "model_key": model_key.result()}))


async def main(fd: int, metrics_directory: str | None = None) -> None:
    """`metrics_directory`: where the web process's metrics are counted
    (app.observability.metrics)."""
    if metrics_directory:
        metrics.start(Path(metrics_directory))  # before anything here can count
    # Its parent's settings, exactly, from the environment it was given (`.env` included,
    # as the parent read it): never a `.env` of its own, which a parent given other
    # settings (a test's) did not read.
    settings = load_settings(_env_file=None)
    setup_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT)
    engine = create_engine(settings.DATABASE_URL, connections=CONNECTIONS)
    if engine.dialect.name == "sqlite":
        # Every statement its own transaction (the worker's writes are single statements): a
        # transaction spanning turns of this busy, lower-priority event loop would hold
        # SQLite's one write lock for tens of milliseconds, and the web process's commits,
        # waiting on it with SQLite's growing sleeps, would take seconds to acknowledge.
        engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        # Nor may a statement outlive its turn: one with RETURNING keeps the lock until its
        # rows are fetched, one more turn of the loop later. New rows' ids come from
        # lastrowid instead (the ORM asks the dialect).
        dialect = engine.sync_engine.dialect
        dialect.insert_returning = dialect.update_returning = dialect.delete_returning = False
    core = build_core(settings, engine, runs_jobs=True)
    assert core.services is not None
    core.services.start()
    # LiteLLM and slack-sdk, imported from the start, as inline mode does: the first job
    # should not wait for them, nor this process's first "on it" sign and Slack call.
    loading = asyncio.create_task(load_job_libraries())
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd))
    # Until then the parent keeps quick work (the "on it" sign) to itself, and its /readyz
    # says 503: an import holds this interpreter's lock for seconds.
    checking = asyncio.create_task(check_model_key(settings))  # a WARNING when there is none
    telling = asyncio.create_task(_tell_when_loaded(writer, checking, loading))
    logger.info("job worker ready (pid %d)", os.getpid())
    try:
        child = Child(handlers=_handlers(core.services), identity=core.identity, writer=writer)
        await child.serve(reader)
    finally:
        telling.cancel()
        checking.cancel()
        loading.cancel()
        writer.close()
        await core.close()
        logger.info("job worker stopped")


def run() -> None:
    for name in (signal.SIGTERM, signal.SIGINT):
        signal.signal(name, signal.SIG_IGN)
    asyncio.run(main(int(sys.argv[1]), *sys.argv[2:3]))
    # Everything is closed. Exit now rather than wait for the interpreter's teardown, which
    # waits for a LiteLLM import still running on its thread (seconds the parent's stop,
    # within the platform's grace after SIGTERM, would spend waiting for this process).
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    # Run as `python -m`, this file is the module `__main__`: import it under its own name and
    # run that, so its log lines are named app.wiring.worker like every other module's.
    from app.wiring import worker

    worker.run()
