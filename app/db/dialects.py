"""INSERT … ON CONFLICT for the database in use, importing only its own dialect; a read that
may fail inside a transaction that must go on; a list bound as one parameter.

The PostgreSQL dialect costs tens of milliseconds of start-up that a SQLite deployment (and
every SQLite test) would otherwise pay for nothing; the SQLite dialect is loaded with the
engine anyway.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sqlalchemy import ARRAY, JSON, ColumnElement, String, any_, bindparam, func, select

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert
    from sqlalchemy.engine import Connection
    from sqlalchemy.orm import Mapped


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


def in_listed(
    column: ColumnElement[Any] | Mapped[Any], name: str, dialect: str
) -> ColumnElement[bool]:
    """`column IN` the list bound as `name`, as one parameter: a PostgreSQL array (= ANY, an
    index search), a JSON array on SQLite (IN json_each). The statement is compiled once,
    where an expanding IN is rendered again on every run, at a CPU cost above the search's."""
    if dialect == "postgresql":
        return column == any_(bindparam(name, type_=ARRAY(String)))
    listed = func.json_each(bindparam(name, type_=JSON)).table_valued("value")
    return column.in_(select(listed.c.value))
