"""INSERT … ON CONFLICT for the database in use, importing only its own dialect.

The PostgreSQL dialect costs tens of milliseconds of start-up that a SQLite deployment (and
every SQLite test) would otherwise pay for nothing; the SQLite dialect is loaded with the
engine anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.dialects.postgresql import Insert as PostgresInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert


def upsert(dialect: str, table: Any) -> PostgresInsert | SqliteInsert:
    """`INSERT INTO table` in `dialect` ("postgresql" or "sqlite"), ready for
    on_conflict_do_nothing / on_conflict_do_update."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgres_insert

        return postgres_insert(table)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table)
