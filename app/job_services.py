"""The services tomo's jobs run: the judgment, the reply (with its "on it" sign) and the memory
refresh, with what they need (the context builder, the model, thread history, locks).

Built once per process that runs jobs: by the web process when jobs run inline
(JOB_WORKER=inline), by the job worker process (app.worker) otherwise; `close` is the one
shutdown of what they hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.builder import ContextBuilder, Persona
from app.context.directory import Directory
from app.conversation.job import JobParts
from app.conversation.judgment import JudgmentService
from app.conversation.locks import ConversationLocks
from app.conversation.on_it import OnIt
from app.conversation.own_voice import OwnVoice
from app.conversation.reply import ReplyService
from app.conversation.thread_history import ThreadHistory
from app.conversation.tool_loop import ToolLoop
from app.db.engine import sqlite_reader
from app.db.recorder import Recorder
from app.files.fetch import Fetcher
from app.files.reader import FileReader
from app.gate.scopes import Scopes
from app.jobs.backend import Handler
from app.jobs.kinds import JobKind
from app.llm import LLM
from app.memory.refresh import MemoryService
from app.settings import Settings
from app.slack.client import SlackClient
from app.slack.identity import Identity
from app.tools.kit import Kit
from app.tools.registry import Toolbox


@dataclass
class JobServices:
    llm: LLM
    builder: ContextBuilder
    files: FileReader
    judgment: JudgmentService
    reply: ReplyService
    memory: MemoryService
    on_it: OnIt

    def handlers(self) -> Mapping[JobKind, Handler]:
        """What each kind of job runs. A reply asked to (`on_it=True`: the job worker, once
        loaded) puts the "on it" sign up itself (app.conversation.on_it)."""

        async def reply(*, on_it: bool = False, **job: Any) -> list[str]:
            if on_it:
                return list(await self.on_it.around(self.reply.run)(**job))
            return await self.reply.run(**job)

        return {
            JobKind.JUDGMENT: self.judgment.run,
            JobKind.REPLY: reply,
            JobKind.MEMORY: self.memory.run,
        }

    async def close(self) -> None:
        await self.on_it.close()
        await self.files.close()
        self.builder.close()


def build_job_services(
    settings: Settings,
    engine: AsyncEngine,
    *,
    sessions: async_sessionmaker[AsyncSession],
    slack: SlackClient,
    identity: Identity,
    recorder: Recorder,
    directory: Directory,
    voice: OwnVoice,
) -> JobServices:
    llm = LLM(settings, sessions)
    locks = ConversationLocks()
    builder = ContextBuilder(
        persona=Persona(settings.PERSONA_NAME, settings.persona_prompt),
        channel_messages_limit=settings.CHANNEL_MESSAGES_LIMIT,
        thread_memory_days=settings.THREAD_MEMORY_DAYS,
        active_channel_days=settings.ACTIVE_CHANNEL_DAYS,
        reader=sqlite_reader(engine),
        learn=directory.learn,
    )
    files = FileReader(
        fetcher=Fetcher(
            token=settings.SLACK_BOT_TOKEN.get_secret_value(),
            api_url=settings.SLACK_API_URL,
            max_bytes=int(settings.MAX_FILE_MB * 1024 * 1024),
            timeout=settings.SLACK_TIMEOUT_SECONDS,
        ),
        slack=slack,
        engine=engine,
        max_images=settings.MAX_IMAGES_PER_PROMPT,
    )
    kit = Kit(
        settings=settings,
        engine=engine,
        slack=slack,
        identity=identity,
        llm=llm,
        scopes=Scopes(
            engine=engine,
            slack=slack,
            identity=identity,
            learn=lambda people: directory.learn(channel=None, people=people),
        ),
        recorder=recorder,
    )
    tools = ToolLoop(llm=llm, toolbox=Toolbox(settings, kit), max_rounds=settings.MAX_TOOL_ROUNDS)
    parts = JobParts(
        sessions=sessions,
        builder=builder,
        llm=llm,
        identity=identity,
        locks=locks,
        voice=voice,
        files=files,
    )
    return JobServices(
        llm=llm,
        builder=builder,
        files=files,
        judgment=JudgmentService(
            parts,
            max_age=settings.MAX_MESSAGE_AGE_SECONDS,
            max_delay=settings.MAX_REPLY_DELAY_SECONDS,
            slack=slack,
        ),
        reply=ReplyService(
            parts,
            engine=engine,
            slack=slack,
            history=ThreadHistory(
                slack=slack, recorder=recorder, limit=settings.THREAD_HISTORY_LIMIT
            ),
            recorder=recorder,
            history_limit=settings.THREAD_HISTORY_LIMIT,
            streaming=settings.STREAM_REPLIES == "auto",
            api_url=settings.SLACK_API_URL,
            tools=tools,
        ),
        memory=MemoryService(
            engine=engine,
            sessions=sessions,
            llm=llm,
            identity=identity,
            persona_name=settings.PERSONA_NAME,
            active_channel_days=settings.ACTIVE_CHANNEL_DAYS,
            short_term_hours=settings.SHORT_TERM_WINDOW_HOURS,
            thread_memory_days=settings.THREAD_MEMORY_DAYS,
            files=files,
        ),
        on_it=OnIt(slack=slack, engine=engine, recorder=recorder),
    )
