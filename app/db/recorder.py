"""The durable part of the ack path: record events with commits shared by concurrent requests.

Each request hands its record to one writer task and waits for the commit that contains it
(group commit). Many requests in flight cost one transaction between them, and a request is
answered only after its event is on disk, so an acknowledged event survives a crash.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.models import Message, SeenEvent
from app.services.routing import Route, RouteKind
from app.slack.events import IncomingMessage, MessageDeleted, MessageEdited

logger = logging.getLogger(__name__)

MAX_BATCH = 512


@dataclass(frozen=True)
class NewMessage:
    message: IncomingMessage
    route: Route


Change = NewMessage | MessageEdited | MessageDeleted | None


@dataclass(frozen=True)
class Outcome:
    duplicate: bool  # the event id was seen before: nothing was done
    applied: bool  # the change took effect (a new message was stored, an edit applied)


@dataclass
class _Item:
    event_id: str | None
    change: Change
    future: asyncio.Future[Outcome]


def message_row(message: IncomingMessage, route: Route) -> dict[str, Any]:
    return {
        "channel": message.channel,
        "ts": message.ts,
        "team_id": message.team_id,
        "thread_ts": message.thread_ts,
        "conversation_ts": route.conversation_ts,
        "route": route.kind.value,
        "user_id": message.user_id,
        "bot_id": message.bot_id,
        "text": message.text,
        "subtype": message.subtype,
        "channel_type": message.channel_type,
        "created_at": message.created_at,
        "edited_at": None,
        "deleted": False,
    }


class Recorder:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._writer = asyncio.create_task(self._run(), name="recorder")

    async def stop(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
            self._writer = None
        while not self._queue.empty():
            self._queue.get_nowait().future.cancel()

    async def record(self, *, event_id: str | None, change: Change) -> Outcome:
        """Store the change durably; raises when the database failed (nothing was stored)."""
        if self._writer is None:
            raise RuntimeError("recorder is not running")
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Item(event_id, change, future))
        return await future

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                async with self._engine.begin() as connection:
                    outcomes = await self._apply(connection, batch)
            except Exception as error:  # the database failed: every request in it gets a 500
                logger.exception("recording %d events failed", len(batch))
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(error)
                continue
            for item, outcome in zip(batch, outcomes, strict=True):
                if not item.future.done():
                    item.future.set_result(outcome)

    async def _apply(self, connection: AsyncConnection, batch: list[_Item]) -> list[Outcome]:
        now = time.time()
        event_ids = list(dict.fromkeys(i.event_id for i in batch if i.event_id))
        fresh: set[str] = set()
        if event_ids:
            statement = (
                self._insert(SeenEvent)
                .on_conflict_do_nothing()
                .returning(
                    SeenEvent.event_id  # type: ignore[arg-type]
                )
            )
            rows = [{"event_id": event_id, "received_at": now} for event_id in event_ids]
            fresh = set((await connection.execute(statement, rows)).scalars())
        live: list[bool] = []
        for item in batch:
            is_live = item.event_id is None or item.event_id in fresh
            fresh.discard(item.event_id or "")  # a second copy in the same batch is a duplicate
            live.append(is_live)

        # One row per message; when both copies of a mention share a batch, the app_mention wins.
        new_messages: dict[tuple[str, str], NewMessage] = {}
        for item, ok in zip(batch, live, strict=True):
            if ok and isinstance(item.change, NewMessage):
                key = (item.change.message.channel, item.change.message.ts)
                if key not in new_messages or item.change.message.app_mention:
                    new_messages[key] = item.change
        inserted: set[tuple[str, str]] = set()
        if new_messages:
            statement = (
                self._insert(Message)
                .on_conflict_do_nothing()
                .returning(
                    Message.channel,
                    Message.ts,  # type: ignore[arg-type]
                )
            )
            rows = [message_row(n.message, n.route) for n in new_messages.values()]
            inserted = {(row[0], row[1]) for row in await connection.execute(statement, rows)}

        outcomes: list[Outcome] = []
        for item, ok in zip(batch, live, strict=True):
            if not ok:
                outcomes.append(Outcome(duplicate=True, applied=False))
            else:
                applied = await self._apply_change(connection, item.change, inserted, new_messages)
                outcomes.append(Outcome(duplicate=False, applied=applied))
        return outcomes

    async def _apply_change(
        self,
        connection: AsyncConnection,
        change: Change,
        inserted: set[tuple[str, str]],
        stored: dict[tuple[str, str], NewMessage],
    ) -> bool:
        if isinstance(change, NewMessage):
            key = (change.message.channel, change.message.ts)
            if key in inserted:
                return stored[key] is change  # only the copy that was stored counts
            if change.message.app_mention and change.route.kind is RouteKind.REPLY:
                # The `message` copy of a mention came first and was routed before the bot
                # knew its own id: the app_mention makes it a mention, once.
                result = await connection.execute(
                    update(Message)
                    .where(Message.channel == key[0], Message.ts == key[1])  # type: ignore[arg-type]
                    .where(Message.route != RouteKind.REPLY.value)  # type: ignore[arg-type]
                    .values(
                        route=RouteKind.REPLY.value, conversation_ts=change.route.conversation_ts
                    )
                )
                return bool(result.rowcount)
            return False
        if isinstance(change, MessageEdited):
            result = await connection.execute(
                update(Message)
                .where(Message.channel == change.channel, Message.ts == change.ts)  # type: ignore[arg-type]
                .values(text=change.text, edited_at=change.edited_at)
            )
            return bool(result.rowcount)
        if isinstance(change, MessageDeleted):
            result = await connection.execute(
                update(Message)
                .where(Message.channel == change.channel, Message.ts == change.ts)  # type: ignore[arg-type]
                .values(deleted=True, text="")
            )
            return bool(result.rowcount)
        return True
