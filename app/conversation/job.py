"""What the judgment and reply jobs share: they wait until tomo knows who it is (whose turns
are its own), hold their conversation's lock (its judgment and reply never run together), log
under the job's ids, build the context from current data, and never let an error escape."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.builder import ContextBuilder
from app.conversation.locks import ConversationLocks
from app.domain import Context
from app.jobs.kinds import JobKind
from app.slack.identity import Identity

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ConversationJob:
    def __init__(
        self,
        *,
        kind: JobKind,
        sessions: async_sessionmaker[AsyncSession],
        builder: ContextBuilder,
        identity: Identity,
        locks: ConversationLocks,
    ) -> None:
        self._kind = kind
        self._sessions = sessions
        self._builder = builder
        self._identity = identity
        self._locks = locks

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

    async def _context(self, channel: str, thread_ts: str) -> Context:
        async with self._sessions() as session:
            return await self._builder.build(
                session, channel_id=channel, thread_ts=thread_ts, me=self._identity.me()
            )
