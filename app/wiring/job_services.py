"""The services tomo's jobs run: the judgment, the reply (with its "on it" sign) and the memory
refresh, with what they need (the context builder, the model, thread history, locks).

Built once per process that runs jobs: by the web process when jobs run inline
(JOB_WORKER=inline), by the job worker process (app.wiring.worker) otherwise; `close` is the one
shutdown of what they hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.builder import ContextBuilder, Persona
from app.context.directory import Directory
from app.conversation.job import JobParts
from app.conversation.judgment.service import JudgmentService
from app.conversation.locks import ConversationLocks
from app.conversation.reply.on_it import OnIt
from app.conversation.reply.service import ReplyService
from app.conversation.reply.thread_history import ThreadHistory
from app.conversation.reply.tool_loop import ToolLoop
from app.conversation.voice.own_voice import OwnVoice
from app.db.engine import sqlite_reader
from app.digest.service import DigestService
from app.digest.writer import DigestWriter
from app.files.fetch import Fetcher
from app.files.reader import FileReader
from app.gate.scopes import Scopes
from app.jobs.backend import Handler
from app.jobs.kinds import JobKind
from app.llm import LLM
from app.memory.refresh import MemoryService
from app.recording.recorder import Recorder
from app.settings import Settings
from app.slack.identity import Identity
from app.slack.web.client import SlackClient
from app.tools.kit import Kit
from app.tools.registry import Toolbox

if TYPE_CHECKING:  # imported only where MCP_SERVERS is set
    from app.conversation.approval.job import ApprovalJob
    from app.tools.mcp.servers import McpServers


@dataclass
class JobServices:
    llm: LLM
    builder: ContextBuilder
    files: FileReader
    judgment: JudgmentService
    reply: ReplyService
    memory: MemoryService
    digest: DigestService
    on_it: OnIt
    mcp: McpServers | None = None  # MCP_SERVERS' servers (app.tools.mcp)
    approval: ApprovalJob | None = None  # what follows a person's approval (the same)

    def handlers(self) -> Mapping[JobKind, Handler]:
        """What each kind of job runs. A reply asked to (`on_it=True`: the job worker, once
        loaded) puts the "on it" sign up itself (ReplyService.run, app.conversation.reply.on_it)."""

        async def approval(**job: Any) -> float | None:
            return await self.approval.run(**job) if self.approval is not None else None

        return {
            JobKind.JUDGMENT: self.judgment.run,
            JobKind.REPLY: self.reply.run,
            JobKind.MEMORY: self.memory.run,
            JobKind.APPROVAL: approval,
            JobKind.DIGEST: self.digest.run,
        }

    def start(self) -> None:
        """What runs beside the jobs: the MCP servers' checks."""
        if self.mcp is not None:
            self.mcp.start()

    async def close(self) -> None:
        if self.mcp is not None:
            await self.mcp.close()
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
    # One gate for who may see what, for the tools and the prompts alike (what Slack said of
    # memberships is kept once in this process).
    scopes = Scopes(
        engine=engine,
        slack=slack,
        identity=identity,
        learn=lambda people: directory.learn(channel=None, people=people),
    )
    builder = ContextBuilder(
        persona=Persona(settings.PERSONA_NAME, settings.persona_prompt),
        channel_messages_limit=settings.CHANNEL_MESSAGES_LIMIT,
        thread_memory_days=settings.THREAD_MEMORY_DAYS,
        active_channel_days=settings.ACTIVE_CHANNEL_DAYS,
        scopes=scopes,
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
        scopes=scopes,
        recorder=recorder,
    )
    mcp, more = _mcp(settings, engine, slack)
    toolbox = Toolbox(settings, kit, more=more)
    tools = ToolLoop(llm=llm, toolbox=toolbox, max_rounds=settings.MAX_TOOL_ROUNDS)
    on_it = OnIt(slack=slack, engine=engine, recorder=recorder)
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
            on_it=on_it,
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
        digest=DigestService(
            engine=engine,
            slack=slack,
            identity=identity,
            writer=DigestWriter(
                llm=llm,
                persona_name=settings.PERSONA_NAME,
                persona_prompt=settings.persona_prompt,
                zone=settings.timezone,
            ),
            zone=settings.timezone,
            keep_seconds=settings.retention_seconds,
        ),
        on_it=on_it,
        mcp=mcp,
        approval=_approval_job(
            parts,
            engine=engine,
            slack=slack,
            recorder=recorder,
            servers=mcp,
            loop=tools,
            settings=settings,
        ),
    )


def _mcp(
    settings: Settings, engine: AsyncEngine, slack: SlackClient
) -> tuple[McpServers | None, Any]:
    """The MCP servers and their tools, where MCP_SERVERS names any (and tools are offered)."""
    if not settings.mcp_servers or settings.MAX_TOOL_ROUNDS == 0:
        return None, None
    from app.tools.mcp.approvals import ApprovalRequests
    from app.tools.mcp.servers import McpServers
    from app.tools.mcp.toolset import McpTools

    servers = McpServers(settings.mcp_servers, engine=engine)
    asking = ApprovalRequests(engine=engine, slack=slack)
    return servers, McpTools(servers, engine=engine, approvals=asking)


def _approval_job(
    parts: JobParts,
    *,
    engine: AsyncEngine,
    slack: SlackClient,
    recorder: Recorder,
    servers: McpServers | None,
    loop: ToolLoop,
    settings: Settings,
) -> ApprovalJob | None:
    if servers is None:
        return None
    from app.conversation.approval.job import ApprovalJob

    return ApprovalJob(
        parts,
        engine=engine,
        slack=slack,
        recorder=recorder,
        servers=servers,
        loop=loop,
        history_limit=settings.THREAD_HISTORY_LIMIT,
    )
