"""Deleting everything tomo kept of a channel deleted in Slack, or of its whole workspace when
the app was uninstalled or its bot token revoked (docs/data-and-privacy.md).

The record that asks for it (app.db.erasure) was committed with the event, so a deletion cut
short by a restart is carried on by the next purge or start-up, from wherever it stopped.
The order keeps every prompt whole meanwhile: first the timers (no judgment or reply starts
for it), then the memories, summaries and notes (a prompt elsewhere reads them), the decisions,
claims and settings, then the messages a batch at a time, and last, in one commit, the
channel's (or the workspace's) remaining rows with the record marked done.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from sqlalchemy import ColumnElement, Table, delete, true, update
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db import erasure
from app.db.models import (
    Channel,
    ChannelControl,
    DigestRun,
    DigestSchedule,
    Erasure,
    Feedback,
    Judgment,
    LLMCall,
    Memory,
    Message,
    Note,
    OnIt,
    Person,
    Removal,
    Reply,
)
from app.db.models.mcp import McpApproval, McpSwitch
from app.jobs.backend import TimerBackend
from app.jobs.kinds import CHANNEL_JOBS
from app.memory.control import forget_channel, of_channel
from app.memory.notebook import written_in
from app.recording.recorder import Recorder
from app.retention.batches import delete_in_batches, table_of

logger = logging.getLogger(__name__)


def _channel_records(channel: str) -> list[tuple[Table, ColumnElement[bool]]]:
    """A channel's records, after its memories and before its messages."""
    return [
        (table_of(Judgment), col(Judgment.channel) == channel),
        (table_of(Reply), col(Reply.channel) == channel),
        (table_of(Feedback), col(Feedback.channel) == channel),
        (table_of(OnIt), col(OnIt.channel) == channel),
        (table_of(DigestRun), col(DigestRun.channel) == channel),
    ]


def _channel_last(channel: str) -> list[ColumnElement[bool]]:
    """What goes in the last commit: a memory pass or a reply that was under way may have
    written since (a memory, a posted message, a call asked for approval), then the channel's
    settings and name."""
    return [
        of_channel(channel) | (col(Memory.scope) == "workspace"),
        written_in(channel),
        col(Message.channel) == channel,
        col(Removal.channel) == channel,
        col(ChannelControl.channel) == channel,
        col(DigestSchedule.channel) == channel,
        col(McpApproval.channel) == channel,
        col(McpSwitch.channel) == channel,
        col(Channel.id) == channel,
    ]


# The tables of _channel_last's terms, in their order.
CHANNEL_LAST = (
    *(Memory, Note, Message, Removal, ChannelControl, DigestSchedule),
    *(McpApproval, McpSwitch, Channel),
)

# The workspace's rows, messages aside; seen event ids stay (they say nothing of anyone).
WORKSPACE_ROWS = (
    *(Memory, Note, Judgment, Reply, Feedback, OnIt, ChannelControl, LLMCall),
    *(DigestSchedule, DigestRun, McpApproval, McpSwitch),
)
WORKSPACE_LAST = (Memory, Note, Message, Removal, Person, Channel)


class Eraser:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        recorder: Recorder,
        timers: TimerBackend,
        on_workspace_gone: Callable[[], None] = lambda: None,
    ) -> None:
        self._engine = engine
        self._recorder = recorder
        self._timers = timers
        self._on_workspace_gone = on_workspace_gone  # this process stops calling Slack
        self._lock = asyncio.Lock()

    async def prepare(self) -> int:
        """What makes every prompt whole at once, before the long part: the timers of every
        channel (or workspace) being erased cancelled, and its memories forgotten, as `/tomo
        forget` does it (the workspace's too, and a memory pass under way cannot write back
        what it read: app.memory.control). Run at start-up before anything is served, and
        first by `run`. How many timers were cancelled."""
        async with self._engine.connect() as connection:
            records = await erasure.pending(connection)
        if not records:
            return 0
        everything = any(r.scope == erasure.TEAM for r in records)
        if everything:
            self._on_workspace_gone()
        channels = {r.target for r in records if r.scope == erasure.CHANNEL}
        cancelled = 0
        for timer in await self._timers.list():
            if timer.kind in CHANNEL_JOBS and (everything or timer.channel in channels):
                cancelled += bool(await self._timers.remove(timer.id))
        for channel in sorted(channels):
            await forget_channel(self._engine, channel=channel, user="")
        if everything:
            await self._recorder.write(lambda connection: _forget_everything(connection))
        return cancelled

    async def run(self) -> int:
        """Carry out every erasure not finished; how many were finished."""
        async with self._lock:  # one at a time in this process (others may run elsewhere)
            await self.prepare()
            async with self._engine.connect() as connection:
                records = await erasure.pending(connection)
            for record in records:
                started = time.monotonic()
                if record.scope == erasure.TEAM:
                    deleted = await self._workspace(record)
                else:
                    deleted = await self._channel(record)
                logger.info(
                    "erased %s %s (%s): %d messages and everything else kept of it, in %.1f s",
                    record.scope,
                    record.target,
                    record.reason,
                    deleted,
                    time.monotonic() - started,
                )
            return len(records)

    async def _channel(self, record: Erasure) -> int:
        channel = record.target
        for table, where in _channel_records(channel):
            await delete_in_batches(self._recorder, table, where)
        deleted = await delete_in_batches(
            self._recorder, table_of(Message), col(Message.channel) == channel
        )
        tables = CHANNEL_LAST

        def last(connection: Connection) -> None:
            for model, where in zip(tables, _channel_last(channel), strict=True):
                connection.execute(delete(model).where(where))
            _done(connection, record)

        await self._recorder.write(last)
        return deleted

    async def _workspace(self, record: Erasure) -> int:
        for model in WORKSPACE_ROWS:
            await delete_in_batches(self._recorder, table_of(model), true())
        deleted = await delete_in_batches(self._recorder, table_of(Message), true())

        def last(connection: Connection) -> None:
            for model in WORKSPACE_LAST:
                connection.execute(delete(model))
            _done(connection, record)

        await self._recorder.write(last)
        return deleted


def _forget_everything(connection: Connection) -> None:
    connection.execute(delete(Memory))
    connection.execute(delete(Note))


def _done(connection: Connection, record: Erasure) -> None:
    connection.execute(
        update(Erasure)
        .where(col(Erasure.scope) == record.scope, col(Erasure.target) == record.target)
        .where(col(Erasure.requested_at) == record.requested_at)
        .values(done_at=time.time())
    )
