"""The web process's start and stop, run by the app's lifespan (app.main): the schema, the
runtime built (app.wiring.build), the timers restored and started, who tomo is learnt in the
background; at the stop, everything closed in turn."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.migrate import upgrade_to_head
from app.db.models import SeenEvent
from app.db.reachable import DatabaseUnreachable, open_database
from app.jobs.kinds import JobKind
from app.observability import metrics
from app.retention.guard import unless_workspace_gone
from app.retention.purge import PURGE_SECONDS, logged
from app.settings import Settings
from app.wiring.build import build_runtime
from app.wiring.core import load_job_libraries, load_slack_sdk
from app.wiring.known_labels import known_labels
from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

SEEN_EVENT_KEEP_SECONDS = 72 * 3600  # Slack retries for up to 24 h; kept well beyond 48 h
DIRECTORY_REFRESH_SECONDS = 3600.0
PRUNE_SECONDS = 3600.0


async def migrate(settings: Settings, engine: AsyncEngine) -> None:
    """The schema at head. Where jobs run in the job worker, this process keeps only what
    serving needs: a child process migrates (app.db.migrate)."""
    apart = settings.DATABASE_URL if settings.JOB_WORKER == "process" else None
    await upgrade_to_head(engine, apart=apart)


async def prune_seen_events(engine: AsyncEngine) -> None:
    async with engine.begin() as connection:
        await connection.execute(
            delete(SeenEvent).where(
                SeenEvent.received_at < time.time() - SEEN_EVENT_KEEP_SECONDS  # type: ignore[arg-type]
            )
        )


async def _clear_leftover_signs(runtime: Runtime) -> None:
    try:
        await runtime.on_it.clear_leftovers()
    except Exception:
        logger.exception("clearing the 'on it' signs left by the last stop failed")


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Runtime]:
    """Start everything (schema, recorder, timers, identity in the background); stop it all."""
    # Loaded from the very start, alongside the database's start-up, so the first mention's
    # "on it" does not wait for it.
    loading = asyncio.create_task(load_slack_sdk(), name="slack-sdk-import")
    counted = metrics.create_directory() if settings.metrics_token else None
    if counted is not None:
        # Before anything is counted, in this process or the worker; every known series at 0.
        metrics.start(counted, known_labels(settings))
    try:
        engine = await open_database(settings.DATABASE_URL)
    except DatabaseUnreachable:
        loading.cancel()
        metrics.stop(counted)
        raise
    await migrate(settings, engine)
    runtime = build_runtime(settings, engine)
    runtime.metrics_directory = counted
    runtime.tasks.add(loading)
    runtime.recorder.start()
    await runtime.restore_timers()
    await runtime.eraser.prepare()  # a channel or workspace whose deletion was cut short
    if runtime.worker is not None:
        runtime.worker.metrics_directory = counted
        runtime.worker.start()
    timers = runtime.timers
    timers.every(
        JobKind.DIRECTORY,
        seconds=DIRECTORY_REFRESH_SECONDS,
        func=unless_workspace_gone(engine, runtime.directory.sync_channels, what="directory"),
    )
    timers.every(JobKind.PRUNE, seconds=PRUNE_SECONDS, func=lambda: prune_seen_events(engine))
    timers.every(
        JobKind.MEMORY,
        seconds=settings.MEMORY_UPDATE_INTERVAL_SECONDS,
        func=unless_workspace_gone(engine, runtime.jobs.memory, what="memory refresh"),
    )
    timers.every(JobKind.PURGE, seconds=PURGE_SECONDS, func=runtime.purge.run)
    await timers.start()
    runtime.spawn(logged(runtime.purge.run, what="the start-up purge"), "purge")
    runtime.spawn(runtime.slack_access.at_start(), "identity")
    runtime.spawn(_clear_leftover_signs(runtime), "on-it-leftovers")
    if runtime.services is not None:
        runtime.services.start()
        # LiteLLM's seconds of import start only now, so they do not delay the first request.
        runtime.spawn(load_job_libraries(), "job-libraries")
        runtime.spawn(runtime.check_model_key(), "model-key")
    else:
        gc.freeze()  # LiteLLM is the worker's: everything this process needs is loaded
    try:
        yield runtime
    finally:
        gc.unfreeze()
        await timers.stop()
        if runtime.worker is not None:
            await runtime.worker.stop()
            await runtime.on_it.close()  # the web process's own sign (inline: the services')
        await runtime.tasks.cancel_all()
        runtime.intake.participation.close()
        await runtime.close()
        metrics.stop(counted)
        logger.info("stopped cleanly")
