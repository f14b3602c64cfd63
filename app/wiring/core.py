"""What every tomo process holds, the web process and the job worker alike: the database
engine, the Slack client, who tomo is, the recorder (which tells follow-ups as it records:
app.conversation.timing.participation), the channel directory, the own-voice
limits and, where jobs run in this process, the job services (app.wiring.job_services). Built by
`build_core`; `Core.close` is the one shutdown both processes share."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app import llm as llm_module
from app.context.directory import Directory
from app.conversation.timing.pace import with_pace
from app.conversation.timing.participation import Participation
from app.conversation.voice.own_voice import OwnVoice
from app.db.engine import session_factory, sqlite_reader
from app.llm.connections import close_connections
from app.recording.recorder import Recorder
from app.settings import Settings
from app.slack.identity import Identity
from app.slack.web.client import SlackClient

if TYPE_CHECKING:
    from app.wiring.job_services import JobServices

logger = logging.getLogger(__name__)


@dataclass
class Core:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    slack: SlackClient
    identity: Identity
    recorder: Recorder
    participation: Participation
    directory: Directory
    voice: OwnVoice
    services: JobServices | None  # None: this process hands its jobs to the job worker

    async def close(self) -> None:
        if self.services is not None:
            await self.services.close()
        await self.directory.close()
        await self.recorder.stop()
        self.participation.close()
        await self.slack.close()
        await close_connections()  # LiteLLM's, which outlive this event loop otherwise
        await self.engine.dispose()


def build_core(
    settings: Settings,
    engine: AsyncEngine,
    *,
    runs_jobs: bool,
    slack: SlackClient | None = None,
) -> Core:
    """`runs_jobs`: the job services are built here; `slack` may be replaced (the offline
    replay passes a local Slack stand-in)."""
    if slack is None:
        slack = SlackClient(
            token=settings.SLACK_BOT_TOKEN.get_secret_value(),
            base_url=settings.SLACK_API_URL,
            timeout=settings.SLACK_TIMEOUT_SECONDS,
        )
    identity = Identity()
    participation = Participation(
        engine=engine,
        reader=sqlite_reader(engine),
        window=settings.FOLLOW_UP_WINDOW_SECONDS,
        bot_user=lambda: identity.user_id,
    )
    # A person's message is told a follow-up, or given its channel's pace, in the transaction
    # that records it.
    reroute = with_pace(
        participation.follow_ups,
        window=settings.PACE_WINDOW_SECONDS,
        min_wait=settings.MIN_WAIT_SECONDS,
        floor=settings.PACE_MIN_WAIT_SECONDS,
    )
    recorder = Recorder(engine, keep_seconds=settings.retention_seconds, reroute=reroute)
    directory = Directory(
        slack=slack, engine=engine, recorder=recorder, history_limit=settings.CHANNEL_MESSAGES_LIMIT
    )
    voice = OwnVoice(
        engine=engine,
        cooldown=settings.AUTONOMOUS_COOLDOWN_SECONDS,
        daily_cap=settings.MAX_AUTONOMOUS_REPLIES_PER_DAY,
    )
    sessions = session_factory(engine)
    services = None
    if runs_jobs:
        from app.wiring.job_services import build_job_services

        services = build_job_services(
            settings,
            engine,
            sessions=sessions,
            slack=slack,
            identity=identity,
            recorder=recorder,
            directory=directory,
            voice=voice,
        )
    return Core(
        settings=settings,
        engine=engine,
        sessions=sessions,
        slack=slack,
        identity=identity,
        recorder=recorder,
        participation=participation,
        directory=directory,
        voice=voice,
        services=services,
    )


# Set once slack-sdk's async client is imported in this process (by load_slack_sdk).
_slack_sdk_loaded = threading.Event()


async def load_slack_sdk() -> None:
    """slack-sdk's async client (aiohttp under it: a quarter of a second of imports, more on a
    busy machine), loaded on a thread, so a process's first Slack call does not wait for it."""
    with contextlib.suppress(ImportError):  # the first call reports it
        await asyncio.to_thread(importlib.import_module, "slack_sdk.web.async_client")
        _slack_sdk_loaded.set()


async def load_job_libraries() -> None:
    """What a job calls, loaded before the first job needs it: LiteLLM (seconds, on its own
    thread: app.llm.preload), slack-sdk's async client and the prompt templates. Then the
    collector is kept off what start-up built: a full collection would walk those few hundred
    thousand objects, a pause of a quarter of a second."""
    from app.llm.prompts import compile_templates

    started = time.monotonic()
    llm_module.preload()
    # A failed import is logged by app.llm, or reported by the first call that needs it.
    await asyncio.gather(
        llm_module.litellm_module(),
        load_slack_sdk(),
        asyncio.to_thread(compile_templates),
        return_exceptions=True,
    )
    gc.freeze()
    if job_libraries_loaded():
        logger.info("LiteLLM and slack-sdk loaded in %.1f s", time.monotonic() - started)


def job_libraries_loaded() -> bool:
    """This process has imported what a job calls: a job started now waits for no import."""
    return llm_module.loaded() and _slack_sdk_loaded.is_set()
