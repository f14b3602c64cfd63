"""One lock per conversation, so its judgment and reply jobs never run at the same time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from app.jobs.kinds import JobKind, job_id
from app.observability.logs import log_context


class ConversationLocks:
    def __init__(self) -> None:
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._users: dict[tuple[str, str], int] = {}

    @contextlib.asynccontextmanager
    async def job(self, kind: JobKind, channel: str, thread_ts: str) -> AsyncIterator[None]:
        """Run a conversation's job: its lock held, its ids on every log line."""
        with log_context(
            job_id=job_id(kind, channel, thread_ts), channel=channel, thread_ts=thread_ts
        ):
            async with self.hold(channel, thread_ts):
                yield

    @contextlib.asynccontextmanager
    async def hold(self, channel: str, thread_ts: str) -> AsyncIterator[None]:
        key = (channel, thread_ts)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]
