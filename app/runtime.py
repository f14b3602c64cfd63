"""Every long-lived resource of the process, built and closed by the app's lifespan."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app import llm as llm_module
from app.context.builder import ContextBuilder, Persona
from app.context.directory import Directory
from app.conversation.intake import Intake
from app.conversation.judgment import JudgmentService
from app.conversation.locks import ConversationLocks
from app.conversation.on_it import OnIt
from app.conversation.own_voice import OwnVoice
from app.conversation.recovery import restore_timers
from app.conversation.reply import ReplyService
from app.conversation.thread_history import ThreadHistory
from app.conversation.timer_policy import TimerPolicy
from app.db.engine import create_engine, session_factory, sqlite_reader
from app.db.migrate import upgrade_to_head
from app.db.models import SeenEvent
from app.db.recorder import Recorder
from app.jobs.kinds import JobKind
from app.jobs.supervisor import WorkerJobs
from app.jobs.timers import Timers
from app.llm import LLM
from app.memory.refresh import MemoryService
from app.settings import Settings
from app.slack.client import SlackClient
from app.slack.identity import Identity

logger = logging.getLogger(__name__)

SEEN_EVENT_KEEP_SECONDS = 72 * 3600  # Slack retries for up to 24 h; kept well beyond 48 h
DIRECTORY_REFRESH_SECONDS = 3600.0


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    recorder: Recorder
    slack: SlackClient
    timers: Timers
    identity: Identity
    llm: LLM
    builder: ContextBuilder
    directory: Directory
    timer_policy: TimerPolicy
    intake: Intake
    judgment: JudgmentService
    reply: ReplyService
    memory: MemoryService
    voice: OwnVoice
    on_it: OnIt
    worker: WorkerJobs | None = None  # None: jobs run inline, on this event loop
    background: set[asyncio.Task[None]] = field(default_factory=set)

    async def restore_timers(self) -> int:
        """Every conversation still owed a judgment or a reply gets its timer back."""
        async with self.sessions() as session:
            return await restore_timers(
                session,
                self.timer_policy,
                min_wait=self.settings.MIN_WAIT_SECONDS,
                max_age=self.settings.MAX_MESSAGE_AGE_SECONDS,
            )

    def spawn(self, coroutine: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coroutine, name=name)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

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
    timers: Timers | None = None,
    worker: bool = False,
) -> Runtime:
    """Everything wired together; `slack` and `timers` may be replaced (the offline replay
    passes a local Slack stand-in and timers that compress time). With `worker`, the timers'
    judgment, reply and memory jobs run in a worker process (app.jobs.supervisor) rather than
    inline."""
    sessions = session_factory(engine)
    if slack is None:
        slack = SlackClient(
            token=settings.SLACK_BOT_TOKEN.get_secret_value(),
            base_url=settings.SLACK_API_URL,
            timeout=settings.SLACK_TIMEOUT_SECONDS,
        )
    timers = Timers() if timers is None else timers
    identity = Identity()
    llm = LLM(settings, sessions)
    locks = ConversationLocks()
    voice = OwnVoice(
        engine=engine,
        cooldown=settings.AUTONOMOUS_COOLDOWN_SECONDS,
        daily_cap=settings.MAX_AUTONOMOUS_REPLIES_PER_DAY,
    )
    history = ThreadHistory(slack=slack, engine=engine, limit=settings.THREAD_HISTORY_LIMIT)
    recorder = Recorder(engine)
    directory = Directory(
        slack=slack,
        engine=engine,
        recorder=recorder,
        history_limit=settings.CHANNEL_MESSAGES_LIMIT,
    )
    builder = ContextBuilder(
        persona=Persona(settings.PERSONA_NAME, settings.persona_prompt),
        channel_messages_limit=settings.CHANNEL_MESSAGES_LIMIT,
        thread_memory_days=settings.THREAD_MEMORY_DAYS,
        active_channel_days=settings.ACTIVE_CHANNEL_DAYS,
        reader=sqlite_reader(engine),
        learn=directory.learn,
    )
    reply = ReplyService(
        engine=engine,
        sessions=sessions,
        builder=builder,
        llm=llm,
        slack=slack,
        history=history,
        identity=identity,
        locks=locks,
        voice=voice,
        history_limit=settings.THREAD_HISTORY_LIMIT,
    )
    jobs = (
        WorkerJobs(settings, identity, on_restart=lambda: runtime.restore_timers())
        if worker
        else None
    )
    # The "on it" sign is put up by the job worker once its libraries are loaded
    # (app.jobs.worker), by the process that owns the timers until then.
    on_it = OnIt(slack=slack, engine=engine, recorder=recorder)
    timer_policy = TimerPolicy(
        timers=timers,
        judge=jobs.judgment if jobs else lambda **kw: judgment.run(**kw),
        reply=(
            on_it.around(jobs.reply, elsewhere=lambda: jobs.loaded)
            if jobs
            else on_it.around(reply.run)
        ),
        min_wait=settings.MIN_WAIT_SECONDS,
        jitter_ratio=settings.JITTER_RATIO,
    )

    judgment = JudgmentService(
        sessions=sessions,
        builder=builder,
        llm=llm,
        identity=identity,
        locks=locks,
        voice=voice,
        max_age=settings.MAX_MESSAGE_AGE_SECONDS,
        max_delay=settings.MAX_REPLY_DELAY_SECONDS,
    )
    runtime = Runtime(
        settings=settings,
        engine=engine,
        sessions=sessions,
        recorder=recorder,
        slack=slack,
        timers=timers,
        identity=identity,
        llm=llm,
        builder=builder,
        directory=directory,
        timer_policy=timer_policy,
        intake=Intake(
            identity=identity,
            recorder=recorder,
            directory=directory,
            timer_policy=timer_policy,
            auto_reply_channels=settings.AUTO_REPLY_CHANNELS,
        ),
        judgment=judgment,
        reply=reply,
        memory=MemoryService(
            engine=engine,
            sessions=sessions,
            llm=llm,
            identity=identity,
            persona_name=settings.PERSONA_NAME,
            active_channel_days=settings.ACTIVE_CHANNEL_DAYS,
            short_term_hours=settings.SHORT_TERM_WINDOW_HOURS,
            thread_memory_days=settings.THREAD_MEMORY_DAYS,
        ),
        voice=voice,
        on_it=on_it,
        worker=jobs,
    )
    return runtime


async def _after_identity(runtime: Runtime) -> None:
    await runtime.directory.load_bots()
    await runtime.identity.learn(runtime.slack)
    runtime.spawn(runtime.identity.watch(runtime.slack), "slack-check")
    await runtime.directory.sync_channels()


async def load_slack_sdk() -> None:
    with contextlib.suppress(ImportError):  # the first call reports it
        await asyncio.to_thread(importlib.import_module, "slack_sdk.web.async_client")


async def _clear_leftover_signs(runtime: Runtime) -> None:
    try:
        await runtime.on_it.clear_leftovers()
    except Exception:
        logger.exception("clearing the 'on it' signs left by the last stop failed")


async def freeze_after_litellm() -> None:
    """Once LiteLLM is in, keep the collector off what start-up built: a full collection would
    walk those few hundred thousand objects, a pause of a quarter of a second."""
    with contextlib.suppress(Exception):  # a failed import is logged by app.llm
        await llm_module.litellm_module()
    gc.freeze()


@contextlib.asynccontextmanager
async def running(settings: Settings) -> AsyncIterator[Runtime]:
    """Start everything (schema, recorder, timers, identity in the background); stop it all."""
    # slack-sdk's async client (aiohttp under it: a quarter of a second of imports, more on a
    # busy machine) is loaded on a thread from the very start, alongside the database's
    # start-up, so the first mention's "on it" does not wait for it.
    loading = asyncio.create_task(load_slack_sdk(), name="slack-sdk-import")
    engine = create_engine(settings.DATABASE_URL)
    await upgrade_to_head(engine)
    runtime = build_runtime(settings, engine, worker=settings.JOB_WORKER == "process")
    runtime.background.add(loading)
    loading.add_done_callback(runtime.background.discard)
    runtime.recorder.start()
    await runtime.restore_timers()
    if runtime.worker is not None:
        runtime.worker.start()
    runtime.timers.every(
        JobKind.DIRECTORY, seconds=DIRECTORY_REFRESH_SECONDS, func=runtime.directory.sync_channels
    )
    runtime.timers.every(JobKind.PRUNE, seconds=3600.0, func=runtime.prune_seen_events)
    runtime.timers.every(
        JobKind.MEMORY,
        seconds=settings.MEMORY_UPDATE_INTERVAL_SECONDS,
        func=runtime.worker.memory if runtime.worker else runtime.memory.run,
    )
    runtime.timers.start()
    runtime.spawn(_after_identity(runtime), "identity")
    runtime.spawn(_clear_leftover_signs(runtime), "on-it-leftovers")
    if runtime.worker is None:
        # LiteLLM's seconds of import start only now, so they do not delay the first request.
        llm_module.preload()
        runtime.spawn(freeze_after_litellm(), "gc-freeze")
    else:
        gc.freeze()  # LiteLLM is the worker's: everything this process needs is loaded
    try:
        yield runtime
    finally:
        gc.unfreeze()
        await runtime.timers.stop()
        if runtime.worker is not None:
            await runtime.worker.stop()
        await runtime.on_it.close()
        for task in list(runtime.background):
            task.cancel()
        await asyncio.gather(*runtime.background, return_exceptions=True)
        await runtime.directory.close()
        await runtime.recorder.stop()
        await runtime.slack.close()
        runtime.builder.close()
        await engine.dispose()
        logger.info("stopped cleanly")
