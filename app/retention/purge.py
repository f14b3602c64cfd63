"""The purge (docs/data-and-privacy.md): at start-up and every PURGE_SECONDS, once for the
whole fleet (a periodic job), delete

- messages (with what was read of their files), decisions, reply claims, the feedback given
  them, LLM call records, removal notes and calls asked for approval (with their arguments
  and results) older than MESSAGE_RETENTION_DAYS (by the message's Slack time, or the
  record's own);
- messages of a channel written before its last `/tomo forget` (one cut short goes on here);
- the memories and notes of a channel tomo was removed from longer ago than the retention;
- and it carries on the deletions of channels and workspaces not finished (app.retention.erase).

Memories are summaries and notes are memories: they stay until forgotten or their channel is
gone. Seen event ids
keep their own 72 hours (app.wiring.lifespan.prune_seen_events).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, delete
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db import erasure
from app.db.models import Feedback, Judgment, LLMCall, Memory, Message, Note, Removal, Reply
from app.db.models.mcp import McpApproval
from app.memory.control import forget_records, of_channel
from app.memory.notebook import written_in
from app.recording.recorder import Recorder
from app.retention.batches import delete_in_batches, table_of
from app.retention.erase import Eraser

logger = logging.getLogger(__name__)

PURGE_SECONDS = 3600.0  # at least hourly (and at start-up)


# What expires, by the time it goes by.
EXPIRING: tuple[tuple[str, Table, Any], ...] = (
    ("messages", table_of(Message), col(Message.created_at)),
    ("decisions", table_of(Judgment), col(Judgment.decided_at)),
    ("claims", table_of(Reply), col(Reply.created_at)),
    ("feedback", table_of(Feedback), col(Feedback.at)),
    ("llm_calls", table_of(LLMCall), col(LLMCall.started_at)),
    ("removals", table_of(Removal), col(Removal.created_at)),
    ("approvals", table_of(McpApproval), col(McpApproval.created_at)),
)


@dataclass
class Purged:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, count: int) -> None:
        if count:
            self.counts[what] = self.counts.get(what, 0) + count

    @property
    def total(self) -> int:
        return sum(self.counts.values())


async def logged(work: Callable[[], Awaitable[object]], *, what: str) -> None:
    """`work` in the background: a failure is logged, and the next purge goes on with it."""
    try:
        await work()
    except Exception:
        logger.exception("%s failed; the next purge will go on with it", what)


class Purge:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        recorder: Recorder,
        eraser: Eraser,
        keep_seconds: float | None,
    ) -> None:
        self._engine = engine
        self._recorder = recorder
        self._eraser = eraser
        self.keep_seconds = keep_seconds  # None: kept until deleted in Slack

    def keep_after(self, now: float | None = None) -> float | None:
        """The Slack time before which nothing is kept (None: no limit)."""
        if self.keep_seconds is None:
            return None
        return (time.time() if now is None else now) - self.keep_seconds

    async def run(self, *, now: float | None = None) -> Purged:
        """One purge; safe to run anywhere at any time, several at once included."""
        purged = Purged()
        started = time.monotonic()
        await self._eraser.run()
        await self._forgotten(purged)
        before = self.keep_after(now)
        if before is not None:
            for what, table, when in EXPIRING:
                purged.add(what, await delete_in_batches(self._recorder, table, when < before))
            await self._left(purged, before)
        if purged.total:
            logger.info(
                "purge: deleted %s in %.1f s",
                ", ".join(f"{count} {what}" for what, count in sorted(purged.counts.items())),
                time.monotonic() - started,
            )
        return purged

    async def _forgotten(self, purged: Purged) -> None:
        async with self._engine.connect() as connection:
            records = await forget_records(connection)
        for channel, forgotten_at in records.items():
            where = (col(Message.channel) == channel) & (col(Message.created_at) < forgotten_at)
            deleted = await delete_in_batches(self._recorder, table_of(Message), where)
            purged.add("forgotten", deleted)

    async def _left(self, purged: Purged, before: float) -> None:
        """What remains of channels tomo left longer ago than the retention: their memories
        and notes (their messages and records have expired by now)."""
        async with self._engine.connect() as connection:
            channels = await erasure.left_before(connection, before)
        for channel in channels:

            def forget(connection: Connection, channel: str = channel) -> tuple[int, int]:
                result = connection.execute(delete(Memory).where(of_channel(channel)))
                notes = connection.execute(delete(Note).where(written_in(channel)))
                return int(result.rowcount or 0), int(notes.rowcount or 0)

            deleted, notes = await self._recorder.write(forget)
            purged.add("notes", notes)
            if deleted:  # the workspace's are written from the channels': anew without it
                await self._recorder.write(
                    lambda c: c.execute(delete(Memory).where(col(Memory.scope) == "workspace"))
                )
            purged.add("memories", deleted)
