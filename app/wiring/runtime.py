"""The web process's long-lived parts, built and closed by the app's lifespan: everything every
process holds (app.wiring.core), plus the timers, where their jobs run, the "on it" sign, the timer
policy and the intake of events."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine

from app.assistant.suggested import SuggestedPrompts
from app.conversation.claims.ending import interrupt as interrupt_claims
from app.conversation.intake import Intake
from app.conversation.reply.on_it import OnIt
from app.conversation.timing.policy import TimerPolicy
from app.conversation.timing.recovery import restore_timers
from app.db.mcp import approvals
from app.db.migrate import upgrade_to_head
from app.db.models import SeenEvent
from app.db.reachable import DatabaseUnreachable, open_database
from app.digest import runs as digest_runs
from app.digest.timers import DigestTimers
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.jobs.runner import InlineJobs, JobRunner
from app.jobs.supervisor import WorkerJobs
from app.jobs.timers import Timers
from app.llm.model_keys import CHECKING, check_model_key
from app.observability import metrics
from app.retention.erase import Eraser
from app.retention.guard import unless_workspace_gone
from app.retention.purge import PURGE_SECONDS, Purge, logged
from app.settings import Settings
from app.slack.client import SlackClient
from app.wiring.core import Core, build_core, load_job_libraries, load_slack_sdk
from app.wiring.known_labels import known_labels
from app.wiring.reinstall import SLACK_RESUME, after_identity, resume_slack, slack_works_again

if TYPE_CHECKING:  # the job services are built only where jobs run (app.wiring.core)
    from app.context.builder import ContextBuilder
    from app.conversation.approval.timers import ApprovalTimers
    from app.conversation.judgment.service import JudgmentService
    from app.conversation.reply.service import ReplyService
    from app.llm import LLM
    from app.memory.refresh import MemoryService
    from app.wiring.job_services import JobServices

logger = logging.getLogger(__name__)

SEEN_EVENT_KEEP_SECONDS = 72 * 3600  # Slack retries for up to 24 h; kept well beyond 48 h
DIRECTORY_REFRESH_SECONDS = 3600.0
PRUNE_SECONDS = 3600.0


@dataclass
class Runtime(Core):
    timers: TimerBackend = field(kw_only=True)
    jobs: JobRunner = field(kw_only=True)
    on_it: OnIt = field(kw_only=True)  # the sign this process puts up around a reply job
    timer_policy: TimerPolicy = field(kw_only=True)
    digests: DigestTimers = field(kw_only=True)
    intake: Intake = field(kw_only=True)
    eraser: Eraser = field(kw_only=True)
    purge: Purge = field(kw_only=True)
    background: set[asyncio.Task[None]] = field(default_factory=set, kw_only=True)
    # Inline: the model key check's outcome (app.llm.model_keys), None until LiteLLM is loaded.
    model_key: str | None = field(default=None, kw_only=True)
    # Where this instance's processes count (app.observability.metrics); None: METRICS_TOKEN is
    # unset.
    metrics_directory: Path | None = field(default=None, kw_only=True)
    # The timers of calls waiting for approval; None: MCP_SERVERS is unset.
    approval_timers: ApprovalTimers | None = field(default=None, kw_only=True)

    @property
    def worker(self) -> WorkerJobs | None:
        """The job worker process's supervisor; None when jobs run inline."""
        return self.jobs if isinstance(self.jobs, WorkerJobs) else None

    @property
    def inline(self) -> JobServices:
        """The job services, when jobs run in this process (JOB_WORKER=inline)."""
        if self.services is None:
            raise RuntimeError("jobs run in the job worker process, not here")
        return self.services

    @property
    def llm(self) -> LLM:
        return self.inline.llm

    @property
    def builder(self) -> ContextBuilder:
        return self.inline.builder

    @property
    def judgment(self) -> JudgmentService:
        return self.inline.judgment

    @property
    def reply(self) -> ReplyService:
        return self.inline.reply

    @property
    def memory(self) -> MemoryService:
        return self.inline.memory

    async def restore_timers(self) -> int:
        """Every conversation still owed a judgment or a reply gets its timer back, and every
        digest schedule its timer (a digest cut short by the stop is owed again)."""
        async with self.engine.begin() as connection:
            keep = await self.timers.channels_running(JobKind.DIGEST)
            if await digest_runs.interrupt_unfinished(connection, keep=keep):
                logger.warning("a digest was cut short by the last stop")
        await self.digests.restore()
        async with self.sessions() as session:
            restored = await restore_timers(
                session,
                self.timer_policy,
                min_wait=self.settings.MIN_WAIT_SECONDS,
                follow_up_wait=self.settings.FOLLOW_UP_WAIT_SECONDS,
                max_age=self.settings.MAX_MESSAGE_AGE_SECONDS,
                replying=await self.timers.replies_running(),
            )
        if self.approval_timers is not None:
            restored += await self.approval_timers.restore()
        return restored

    @property
    def model_key_state(self) -> str:
        """`ok`, `checking` while LiteLLM loads, or why the models cannot be asked (no key):
        where jobs run, the job worker or this process, checked it."""
        known = self.worker.model_key if self.worker is not None else self.model_key
        return known or CHECKING

    async def check_model_key(self) -> None:
        self.model_key = await check_model_key(self.settings)

    def spawn(self, coroutine: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coroutine, name=name)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def stop_calling_slack(self) -> None:
        """The workspace is gone: this process's check of the bot token stops, and the token
        counts as refused until Slack takes it again."""
        self.identity.gone("the app was uninstalled")
        for task in list(self.background):
            if task.get_name() in ("slack-check", SLACK_RESUME):
                task.cancel()

    async def prune_seen_events(self) -> None:
        async with self.engine.begin() as connection:
            await connection.execute(
                delete(SeenEvent).where(
                    SeenEvent.received_at < time.time() - SEEN_EVENT_KEEP_SECONDS  # type: ignore[arg-type]
                )
            )


def build_runtime(
    settings: Settings,
    engine: AsyncEngine,
    *,
    slack: SlackClient | None = None,
    timers: TimerBackend | None = None,
) -> Runtime:
    """Everything wired together; `slack` and `timers` may be replaced (the offline replay
    passes a local Slack stand-in and timers that compress time). Here, and only here, it is
    decided which engine keeps the timers (JOB_BACKEND) and where jobs run: in the job worker
    process (JOB_WORKER=process) or inline."""
    in_worker = settings.JOB_WORKER == "process"
    core = build_core(settings, engine, runs_jobs=not in_worker, slack=slack)
    if timers is None:
        timers = build_timers(settings, engine)
    jobs: JobRunner
    if in_worker:
        jobs = WorkerJobs(settings, core.identity, on_restart=lambda: runtime.restore_timers())
        # Until the worker is up with its libraries loaded, this process puts the sign up.
        on_it = OnIt(slack=core.slack, engine=engine, recorder=core.recorder)
    else:
        assert core.services is not None
        jobs = InlineJobs(core.services.handlers())
        on_it = core.services.on_it
    approval_timers = None
    if settings.mcp_servers:
        from app.conversation.approval.timers import ApprovalTimers

        approval_timers = ApprovalTimers(engine=engine, timers=timers, run=jobs.approval)
    timer_policy = TimerPolicy(
        timers=timers,
        judge=jobs.judgment,
        reply=on_it.around(jobs.reply, elsewhere=lambda: jobs.shows_on_it),
        after_reply=approval_timers.after_reply if approval_timers is not None else None,
        min_wait=settings.MIN_WAIT_SECONDS,
        jitter_ratio=settings.JITTER_RATIO,
        follow_up_wait=settings.FOLLOW_UP_WAIT_SECONDS,
        pace_floor=settings.PACE_MIN_WAIT_SECONDS,
    )
    digests = DigestTimers(engine=engine, timers=timers, run=jobs.digest)
    prompts = SuggestedPrompts(slack=core.slack, engine=engine)
    intake = Intake(
        identity=core.identity,
        recorder=core.recorder,
        directory=core.directory,
        timer_policy=timer_policy,
        participation=core.participation,
        auto_reply_channels=settings.AUTO_REPLY_CHANNELS,
        on_erasure=lambda: runtime.spawn(logged(runtime.eraser.run, what="erasing"), "erase"),
        on_assistant_opened=lambda opened: runtime.spawn(prompts.offer(opened), "prompts"),
        on_refused=lambda: resume_slack(runtime),
    )
    eraser = Eraser(
        engine=engine,
        recorder=core.recorder,
        timers=timers,
        on_workspace_gone=lambda: runtime.stop_calling_slack(),
    )
    purge = Purge(
        engine=engine,
        recorder=core.recorder,
        eraser=eraser,
        keep_seconds=settings.retention_seconds,
    )
    runtime = Runtime(
        **vars(core),
        timers=timers,
        jobs=jobs,
        on_it=on_it,
        timer_policy=timer_policy,
        digests=digests,
        intake=intake,
        eraser=eraser,
        purge=purge,
        approval_timers=approval_timers,
    )
    core.identity.on_authorized = lambda: slack_works_again(runtime)
    return runtime


def build_timers(settings: Settings, engine: AsyncEngine) -> TimerBackend:
    if settings.JOB_BACKEND != "procrastinate":
        return Timers()
    from app.jobs.database_timers import DatabaseTimers  # Procrastinate loads only when used

    async def hand_back(kind: JobKind, details: dict[str, Any]) -> None:
        """A reply or digest whose instance died mid-way: its claim is owed again, for the
        retry. An approved call it was making: cut short, never made again."""
        if kind is JobKind.REPLY:
            await interrupt_claims(
                engine, channel=details["channel"], thread_ts=details["thread_ts"]
            )
        elif kind is JobKind.DIGEST:
            await digest_runs.interrupt(engine, channel=details["channel"])
        elif kind is JobKind.APPROVAL and await approvals.cut_short(
            engine, int(details["approval_id"])
        ):
            logger.warning("approval %s: its call was cut short", details["approval_id"])

    return DatabaseTimers(
        settings.DATABASE_URL, stalled_seconds=settings.JOB_STALLED_SECONDS, on_stalled=hand_back
    )


async def migrate(settings: Settings, engine: AsyncEngine) -> None:
    """The schema at head. Where jobs run in the job worker, this process keeps only what
    serving needs: a child process migrates (app.db.migrate)."""
    apart = settings.DATABASE_URL if settings.JOB_WORKER == "process" else None
    await upgrade_to_head(engine, apart=apart)


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
    runtime.background.add(loading)
    loading.add_done_callback(runtime.background.discard)
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
    timers.every(JobKind.PRUNE, seconds=PRUNE_SECONDS, func=runtime.prune_seen_events)
    timers.every(
        JobKind.MEMORY,
        seconds=settings.MEMORY_UPDATE_INTERVAL_SECONDS,
        func=unless_workspace_gone(engine, runtime.jobs.memory, what="memory refresh"),
    )
    timers.every(JobKind.PURGE, seconds=PURGE_SECONDS, func=runtime.purge.run)
    await timers.start()
    runtime.spawn(logged(runtime.purge.run, what="the start-up purge"), "purge")
    runtime.spawn(after_identity(runtime), "identity")
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
        for task in list(runtime.background):
            task.cancel()
        await asyncio.gather(*runtime.background, return_exceptions=True)
        runtime.intake.participation.close()
        await runtime.close()
        metrics.stop(counted)
        logger.info("stopped cleanly")
