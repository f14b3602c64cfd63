"""INSERT … ON CONFLICT for the database in use, importing only its own dialect; a read that
may fail inside a transaction that must go on.

The PostgreSQL dialect costs tens of milliseconds of start-up that a SQLite deployment (and
every SQLite test) would otherwise pay for nothing; the SQLite dialect is loaded with the
engine anyway.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
    from sqlalchemy.engine import Connection


def upsert(dialect: str, table: Any) -> PostgresInsert | SqliteInsert:
    """`INSERT INTO table` in `dialect` ("postgresql" or "sqlite"), ready for
    on_conflict_do_nothing / on_conflict_do_update."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)


def read_guard(connection: Connection) -> AbstractContextManager[Any]:
    """Around a read that may fail in a transaction that goes on after it (the recording
    transaction's follow-up and pace reads): PostgreSQL aborts the whole transaction on a
    failed statement, a savepoint keeps it; SQLite aborts the statement only."""
    if connection.dialect.name == "postgresql":
        return connection.begin_nested()
    return contextlib.nullcontext()
