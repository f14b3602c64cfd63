"""Searching the messages tomo stored, through the index migration 0015 builds, within what
the reader may see (app.gate.scope gives the condition; every query carries it).

A query's words (app.db.search.terms) must all occur, as words or parts of words in any
language. Words of three characters or more are found through the trigram index (SQLite:
app.db.search.sqlite; PostgreSQL: app.db.search.postgresql); words of one or two characters
as each of those says. Best matches first, ties newest first. No words: the newest messages.
Only conversational messages that are not deleted, since `Where.since`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.search.postgresql import postgresql_search
from app.db.search.rows import COLUMNS, MESSAGES, Where, newest, recent
from app.db.search.sqlite import sqlite_search
from app.db.search.terms import Terms

__all__ = ["COLUMNS", "MESSAGES", "Where", "search"]

NEWEST_ROWS = 2000


async def search(
    connection: AsyncConnection, terms: Terms, where: Where, *, limit: int
) -> Sequence[Row[Any]]:
    """The messages matching every word (the newest, for no words), best first."""
    if terms.empty:
        # The newest of the newest NEWEST_ROWS messages, read through ix_message_created alone;
        # when those are too few for this reader, the newest of all (a longer read).
        sqlite = connection.dialect.name == "sqlite"
        bounded = where.after(await recent(connection, NEWEST_ROWS))
        found = (await connection.execute(newest(bounded, limit, by_time=sqlite))).all()
        if len(found) < limit and bounded is not where:
            found = (await connection.execute(newest(where, limit))).all()
        return found
    if connection.dialect.name == "sqlite":
        return await sqlite_search(connection, terms, where, limit)
    return await postgresql_search(connection, terms, where, limit)
