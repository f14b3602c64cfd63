"""What the judgment and reply jobs share: the parts they are built from; they wait until tomo
knows who it is (whose turns are its own), hold their conversation's lock (in this process its
judgment and reply never run together), log under the job's ids, build the context from
current data, read the files it shows, and never let an error escape."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.builder import ContextBuilder
from app.conversation.locks import ConversationLocks
from app.conversation.voice.own_voice import OwnVoice
from app.domain import ChatMessage, Context
from app.files.reader import FileReader
from app.jobs.kinds import JobKind
from app.llm import LLM
from app.slack.identity import Identity

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class JobParts:
    """What the judgment and reply jobs are built from (app.wiring.job_services)."""

    sessions: async_sessionmaker[AsyncSession]
    builder: ContextBuilder
    llm: LLM
    identity: Identity
    locks: ConversationLocks
    voice: OwnVoice
    files: FileReader | None = None  # None: files are named only


class ConversationJob:
    def __init__(self, kind: JobKind, parts: JobParts) -> None:
        self._kind = kind
        self._sessions = parts.sessions
        self._builder = parts.builder
        self._llm = parts.llm
        self._identity = parts.identity
        self._locks = parts.locks
        self._voice = parts.voice
        self._files = parts.files

    async def _guarded(
        self, channel: str, thread_ts: str, work: Callable[[], Awaitable[T]], *, nothing: T
    ) -> T:
        """Run `work` as this conversation's job; on an error, log it and return `nothing`."""
        await self._identity.known.wait()
        async with self._locks.job(self._kind, channel, thread_ts):
            try:
                return await work()
            except Exception:
                logger.exception("%s failed", self._kind.value)
                return nothing

    async def _with_files(
        self, context: Context, *, purpose: str, pictured: Sequence[ChatMessage]
    ) -> Context:
        """The context with what its files show (app.files.reader): documents' text, and for
        a model that sees them, the images of the `pictured` messages the prompt shows them
        with, the first preferred."""
        if self._files is None:
            return context
        if not await self._llm.sees_images(purpose):
            pictured = ()
        return await self._files.for_prompt(context, pictured=pictured)

    async def _context(self, channel: str, thread_ts: str) -> Context:
        async with self._sessions() as session:
            return await self._builder.build(
                session, channel_id=channel, thread_ts=thread_ts, me=self._identity.me()
            )
