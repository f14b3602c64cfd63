"""Deleting many rows without holding up acknowledgements.

SQLite has one writer: a delete of a hundred thousand rows would keep every acknowledgement
waiting for its commit. Rows go a batch at a time, each batch a transaction of its own run by
the recorder's writer (app.db.recorder.Recorder.write: on SQLite the same thread and
connection as the acknowledgements' group commits, so they take turns; on PostgreSQL a pooled
connection). A purge cut short leaves only whole batches done; the next one goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Table, delete, literal_column, select, tuple_
from sqlalchemy.engine import Connection

from app.db.recorder import Recorder

BATCH_ROWS = 200  # rows deleted per commit
PAUSE_SECONDS = 0.005  # between two batches, so acknowledgements are never starved


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
    batch: int | None = None,
    pause: float | None = None,
) -> int:
    """Delete every row of `table` matching `where`, `batch` rows per commit; how many.
    With `returning`, those columns of each deleted row are added to `kept`."""
    batch = batch or BATCH_ROWS
    pause = PAUSE_SECONDS if pause is None else pause
    total = 0
    while True:
        count = await recorder.write(
            lambda connection: _delete_some(connection, table, where, batch, returning, kept)
        )
        total += count
        if count < batch:
            return total
        await asyncio.sleep(pause)
