"""What the search index costs each stored message: the same rows inserted with and without
it (SQLite: its three triggers, and the pending messages indexed every INDEX_ROWS rows, as the
recorder does once a second; PostgreSQL: its GIN index), each inside a transaction that is
rolled back, so the database measured is left as it was. Rows go in statements of
BATCH_ROWS, as the recorder's group commits store them on the acknowledgement's path."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.search.index import INDEX_PENDING_SQL
from bench.recall_corpus import MESSAGE_COLUMNS, _tail, text_of

BATCH_ROWS = 10
INDEX_ROWS = 200  # a second's messages at 200 a second
WITHOUT_INDEX = {
    "sqlite": (
        "DROP TRIGGER IF EXISTS message_search_insert",
        "DROP TRIGGER IF EXISTS message_search_update",
        "DROP TRIGGER IF EXISTS message_search_delete",
    ),
    "postgresql": ("DROP INDEX ix_message_text_trgm",),
}


def _rows(count: int) -> list[dict[str, Any]]:
    rng = random.Random(3)
    tail = _tail(rng)
    now = time.time()
    return [
        {
            "channel": f"CINS{n % 7}",
            "ts": f"{int(now)}.{n:06d}",
            "text": text_of(rng, tail),
            "at": now,
        }
        for n in range(count)
    ]


INSERT = (
    f"INSERT INTO message ({MESSAGE_COLUMNS}) VALUES (:channel, :ts, 'T0001', '', '', "
    "'record', NULL, :text, :at, 'conversational', false)"
)


def _insert_sqlite(path: str, rows: list[dict[str, Any]], *, index: bool) -> float:
    """On SQLite through sqlite3 itself, which begins a transaction before a DROP only when
    told to (autocommit mode, an explicit BEGIN)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        if not index:
            for drop in WITHOUT_INDEX["sqlite"]:
                db.execute(drop)
        started = time.perf_counter()
        for first in range(0, len(rows), BATCH_ROWS):
            db.executemany(INSERT, rows[first : first + BATCH_ROWS])
            if index and (first + BATCH_ROWS) % INDEX_ROWS == 0:
                for statement in INDEX_PENDING_SQL:
                    db.execute(statement)
        took = time.perf_counter() - started
        db.execute("ROLLBACK")
    finally:
        db.close()
    return took


async def _insert(engine: AsyncEngine, rows: list[dict[str, Any]], *, index: bool) -> float:
    """Seconds to insert the rows (the index dropped first when `index` is False), undone."""
    if engine.dialect.name == "sqlite":
        path = str(engine.url.database)
        return await asyncio.to_thread(_insert_sqlite, path, rows, index=index)
    statement = text(INSERT)
    async with engine.connect() as connection:
        transaction = await connection.begin()
        if not index:
            for drop in WITHOUT_INDEX[engine.dialect.name]:
                await connection.execute(text(drop))
        started = time.perf_counter()
        for first in range(0, len(rows), BATCH_ROWS):
            await connection.execute(statement, rows[first : first + BATCH_ROWS])
        took = time.perf_counter() - started
        await transaction.rollback()
    return took


async def per_message_us(engine: AsyncEngine, count: int = 5000) -> tuple[float, float]:
    """(µs per message with the index, without), the better of three turns each, alternating."""
    rows = _rows(count)
    with_index, without = [], []
    for _ in range(3):
        with_index.append(await _insert(engine, rows, index=True))
        without.append(await _insert(engine, rows, index=False))
    return min(with_index) / count * 1e6, min(without) / count * 1e6
