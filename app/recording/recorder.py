"""The durable part of the ack path: record events with commits shared by concurrent requests.

Each request hands its record to one writer task and waits for the commit that contains it
(group commit). Many requests in flight cost one transaction between them, and a request is
answered only after its event is on disk, so an acknowledged event survives a crash.

On a SQLite file the transaction runs on a thread of its own with a synchronous connection:
one hop off the event loop per commit, where aiosqlite would take several per statement. The
WAL is checkpointed ten times a second from another connection, so no commit waits for one,
and once a second the writer puts the messages stored meanwhile into the search index
together (app.db.search.index), outside the commits that acknowledge them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.engine import sqlite_writer
from app.db.erasure import Installed
from app.db.search.index import any_pending, index_pending
from app.recording.deliveries import (
    REJECTED,
    Change,
    Delivery,
    NewMessage,
    Outcome,
    Reroute,
    message_row,
)
from app.recording.ingest import write_batch
from app.recording.isolation import cleaned, is_data_error, is_operational, summary
from app.recording.messages import store_messages
from app.slack.events import IncomingMessage, MessageDeleted

T = TypeVar("T")

__all__ = ["Change", "NewMessage", "Outcome", "Recorder", "Reroute", "message_row"]

logger = logging.getLogger(__name__)

MAX_BATCH = 512
CHECKPOINT_SECONDS = 0.1
INDEX_SECONDS = 1.0


@dataclass
class _Item:
    delivery: Delivery
    future: asyncio.Future[Outcome]


class Recorder:
    def __init__(
        self,
        engine: AsyncEngine,
        *,
        keep_seconds: float | None = None,
        reroute: Reroute | None = None,
    ) -> None:
        """`keep_seconds`: a message older than this (MESSAGE_RETENTION_DAYS) is not stored.
        `reroute`: what tells the follow-ups among new messages, in the same transaction."""
        self._engine = engine
        self._keep_seconds = keep_seconds
        self._reroute = reroute
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._sqlite: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None
        self._checkpoints: asyncio.Task[None] | None = None
        self._indexing: asyncio.Task[None] | None = None
        self._committed = False  # since the last checkpoint
        self._batch: list[_Item] = []

    def start(self) -> None:
        self._sqlite = sqlite_writer(self._engine)
        if self._sqlite is not None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recorder")
            self._checkpoints = asyncio.create_task(self._checkpoint(), name="wal-checkpoint")
            self._indexing = asyncio.create_task(self._index(), name="search-index")
        self._writer = asyncio.create_task(self._run(), name="recorder")

    async def stop(self) -> None:
        for task in (self._writer, self._checkpoints, self._indexing):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._writer = self._checkpoints = self._indexing = None
        for item in self._batch:
            item.future.cancel()
        while not self._queue.empty():
            self._queue.get_nowait().future.cancel()
        if self._thread is not None:
            # A commit under way finishes first; then the writer's connection is closed.
            sqlite, self._sqlite = self._sqlite, None
            if sqlite is not None:
                self._thread.submit(sqlite.dispose)
            await asyncio.to_thread(self._thread.shutdown, wait=True)
            self._thread = None

    async def record(
        self, *, event_id: str | None, change: Change, installed: Installed | None = None
    ) -> Outcome:
        """Store the change durably; raises when the database failed (nothing was stored).
        `installed`: the event was delivered to tomo's bot user (it may lift an uninstall)."""
        if self._writer is None:
            raise RuntimeError("recorder is not running")
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Item(Delivery(event_id, change, installed), future))
        return await future

    async def _run(self) -> None:
        while True:
            self._batch = [await self._queue.get()]
            while len(self._batch) < MAX_BATCH and not self._queue.empty():
                self._batch.append(self._queue.get_nowait())
            deliveries = [item.delivery for item in self._batch]
            results: list[Outcome | Exception]
            try:
                results = list(await self._write(deliveries))
            except Exception as error:
                results = await self._after_failure(deliveries, error)
            for item, result in zip(self._batch, results, strict=True):
                if item.future.done():
                    continue
                if isinstance(result, Outcome):
                    item.future.set_result(result)
                else:  # the database failed: a 500, so Slack delivers the event again
                    item.future.set_exception(result)

    async def _after_failure(
        self, deliveries: list[Delivery], error: Exception
    ) -> list[Outcome | Exception]:
        """A failed group commit: when the database itself failed, every request in it gets
        the error; otherwise the deliveries are written one by one, so one event's values
        fail that event alone (app.recording.isolation)."""
        if is_operational(error):
            logger.error("recording %d events failed", len(deliveries), exc_info=error)
            return [error] * len(deliveries)
        logger.warning(
            "recording %d events together failed (%s); writing them one by one",
            len(deliveries),
            summary(error),
        )
        results: list[Outcome | Exception] = []
        for delivery in deliveries:
            last = results[-1] if results else None
            if isinstance(last, Exception) and is_operational(last):
                results.append(last)  # the database went away meanwhile
            else:
                results.append(await self._write_alone(delivery))
        return results

    async def _write_alone(self, delivery: Delivery) -> Outcome | Exception:
        """One delivery in a transaction of its own; cleaned and tried again when its values
        were refused, rejected when they still are."""
        try:
            return (await self._write([delivery]))[0]
        except Exception as error:
            failure = error
        if not is_data_error(failure):
            logger.error("recording event %s failed", delivery.event_id, exc_info=failure)
            return failure
        storable = cleaned(delivery)
        if storable is not delivery:
            try:
                outcome = (await self._write([storable]))[0]
            except Exception as error:
                failure = error
            else:
                logger.warning(
                    "event %s recorded with NULs or surrogates replaced", delivery.event_id
                )
                return outcome
            if not is_data_error(failure):
                logger.error("recording event %s failed", delivery.event_id, exc_info=failure)
                return failure
        logger.warning(
            "rejected event %s: the database refuses its values (%s)",
            delivery.event_id,
            summary(failure),
        )
        return REJECTED

    async def _write(self, batch: list[Delivery]) -> list[Outcome]:
        now = time.time()
        keep_after = None if self._keep_seconds is None else now - self._keep_seconds
        return await self.write(
            lambda connection: write_batch(
                connection, batch, now=now, keep_after=keep_after, reroute=self._reroute
            )
        )

    async def store(
        self, messages: Sequence[IncomingMessage | MessageDeleted]
    ) -> list[IncomingMessage]:
        """Store messages fetched from Slack or posted by tomo, through the gate (with the
        retention this recorder keeps to); the messages it let in."""
        if not messages:
            return []
        now = time.time()
        keep_after = None if self._keep_seconds is None else now - self._keep_seconds
        return await self.write(
            partial(store_messages, messages=messages, keep_after=keep_after, now=now)
        )

    def _transaction(self, work: Callable[[Connection], T]) -> T:
        assert self._sqlite is not None
        with self._sqlite.begin() as connection:
            result = work(connection)
        self._committed = True
        return result

    async def write(self, work: Callable[[Connection], T]) -> T:
        """Run `work` in a transaction of its own through the writer. On SQLite that is the
        writer's thread and connection, so this process's writes never wait on one another:
        an aiosqlite transaction holds SQLite's one write lock across turns of the event
        loop, and while acknowledgements keep the loop busy the group commits would queue
        behind it."""
        if self._thread is not None:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._thread, self._transaction, work)
        async with self._engine.begin() as connection:
            return await connection.run_sync(work)

    async def _checkpoint(self) -> None:
        """Copy the WAL into the database now and then, alongside the writer (PASSIVE: it
        waits for no reader and no writer)."""
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            if self._committed and self._sqlite is not None:
                self._committed = False
                try:
                    await asyncio.to_thread(_checkpoint_now, self._sqlite)
                except Exception:
                    logger.exception("WAL checkpoint failed; the next one will try again")

    async def _index(self) -> None:
        """Once a second, the messages stored meanwhile (by any process) into the search
        index, in one transaction of the writer: one FTS5 segment for all of them."""
        while True:
            await asyncio.sleep(INDEX_SECONDS)
            if self._thread is None:
                return
            try:
                await asyncio.get_running_loop().run_in_executor(self._thread, self._index_now)
            except Exception:
                logger.exception("indexing the new messages failed; the next turn tries again")

    def _index_now(self) -> None:
        assert self._sqlite is not None
        with self._sqlite.connect() as connection:
            if not any_pending(connection):
                return
        self._transaction(index_pending)


def _checkpoint_now(sqlite: Engine) -> None:
    with sqlite.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")
