"""Keeping SQLite's search index (migration 0019): a stored message waits in
`message_search_pending` until the messages stored meanwhile go into the FTS5 index together.

FTS5 writes a new segment of its index for every transaction that adds to it, and merges
segments as they pile up: indexing each acknowledgement's few messages in their own commit
cost that commit several times over, and now and then a merge of tens of milliseconds.
Together, about once a second (the recorder: app.recording.recorder) and before any search reads the
index (`catch_up`), a second's messages make one segment. PostgreSQL's pg_trgm index needs
none of this: it is an index of the row, and GIN gathers new entries in its own pending list.
"""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

logger = logging.getLogger(__name__)

# The text as 0015 indexes it (two spaces after it): a deletion must later give FTS5 exactly
# what was indexed.
INDEX_PENDING_SQL = (
    "INSERT INTO message_search (rowid, body) SELECT message.rowid, message.text || '  ' "
    "FROM message_search_pending JOIN message ON message.rowid = message_search_pending.id",
    "DELETE FROM message_search_pending",
)
INDEX_PENDING = tuple(text(statement) for statement in INDEX_PENDING_SQL)
ANY_PENDING = text("SELECT 1 FROM message_search_pending LIMIT 1")


def any_pending(connection: Connection) -> bool:
    return connection.execute(ANY_PENDING).first() is not None


def index_pending(connection: Connection) -> None:
    """Index every pending message, in the caller's transaction (SQLite only)."""
    for statement in INDEX_PENDING:
        connection.execute(statement)


async def catch_up(engine: AsyncEngine) -> None:
    """Index what is pending before a search reads the index; nothing on PostgreSQL."""
    if engine.dialect.name != "sqlite":
        return
    try:
        async with engine.connect() as connection:
            if not await connection.run_sync(any_pending):
                return
        async with engine.begin() as connection:
            await connection.run_sync(index_pending)
    except Exception:  # the search still reads what the index holds
        logger.exception("could not index the newest messages before a search")
