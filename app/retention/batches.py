"""Deleting many rows without holding up acknowledgements.

SQLite has one writer: a delete of a hundred thousand rows would keep every acknowledgement
waiting for its commit. Rows go a batch at a time, each batch a transaction of its own run by
the recorder's writer (app.recording.recorder.Recorder.write: on SQLite the same thread and
connection as the acknowledgements' group commits, so they take turns; on PostgreSQL a pooled
connection). An acknowledgement that arrives during a batch waits for it, so a batch is kept
short: its size follows how long the last one took (BATCH_SECONDS), and the writer rests at
least as long between two. A purge cut short leaves only whole batches done; the next one
goes on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from sqlalchemy import ColumnElement, Table, delete, literal_column, select, tuple_
from sqlalchemy.engine import Connection

from app.recording.recorder import Recorder

BATCH_ROWS = 100  # rows deleted by the first commit; then sized to take BATCH_SECONDS
MIN_ROWS, MAX_ROWS = 10, 2000
BATCH_SECONDS = 0.003
PAUSE_SECONDS = 0.005  # between two batches at least (and as long as the last one took)


def table_of(model: type) -> Table:
    """The table of a SQLModel model."""
    return model.__table__  # type: ignore[attr-defined,no-any-return]


def _delete_some(
    connection: Connection,
    table: Table,
    where: ColumnElement[bool],
    limit: int,
    returning: Sequence[Any],
    kept: list[Any] | None,
) -> int:
    keys: list[Any] = list(table.primary_key.columns)
    if connection.dialect.name == "sqlite":
        # Its rowid: a covering index lookup picks the rows, a primary-key seek deletes them
        # (six times faster than by the (channel, ts) key, which reads each row first).
        keys = [literal_column(f"{table.name}.rowid")]
    chosen = select(*keys).where(where).limit(limit)
    target = tuple_(*keys).in_(chosen) if len(keys) > 1 else keys[0].in_(chosen)
    statement = delete(table).where(target)
    if not returning:
        return int(connection.execute(statement).rowcount or 0)
    rows = connection.execute(statement.returning(*returning)).all()
    if kept is not None:
        kept.extend(rows)
    return len(rows)


async def delete_in_batches(
    recorder: Recorder,
    table: Table,
    where: ColumnElement[bool],
    *,
    returning: Sequence[Any] = (),
    kept: list[Any] | None = None,
    pause: float | None = None,
) -> int:
    """Delete every row of `table` matching `where`, a batch per commit; how many. With
    `returning`, those columns of each deleted row are added to `kept`."""
    size = BATCH_ROWS
    pause = PAUSE_SECONDS if pause is None else pause
    total = 0
    while True:
        started = time.perf_counter()
        work = partial(
            _delete_some, table=table, where=where, limit=size, returning=returning, kept=kept
        )
        count = await recorder.write(work)
        took = time.perf_counter() - started
        total += count
        if count < size:
            return total
        size = _next_size(size, took)
        await asyncio.sleep(max(pause, took))


def _next_size(size: int, took: float) -> int:
    """A batch that should take BATCH_SECONDS, by the last one's pace (at most doubling or
    halving at a time)."""
    wanted = size * BATCH_SECONDS / max(took, 1e-6)
    return max(MIN_ROWS, min(MAX_ROWS, round(min(max(wanted, size / 2), size * 2))))
