"""The async engine: one per process, built by the lifespan, SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession


def async_url(database_url: str) -> URL:
    """Map any accepted DATABASE_URL (Heroku's postgres:// included) to its async driver."""
    if database_url.startswith("postgres://"):
        database_url = "postgresql://" + database_url[len("postgres://") :]
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return url.set(drivername="sqlite+aiosqlite")
    if url.get_backend_name() == "postgresql":
        query = dict(url.query)
        sslmode = query.pop("sslmode", None)
        if sslmode and sslmode != "disable":
            query["ssl"] = sslmode
        return url.set(drivername="postgresql+asyncpg", query=query)
    return url


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL: readers never block the writer; synchronous=NORMAL stays durable across a
    # process crash (a committed transaction is in the WAL file before commit returns).
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(database_url: str, *, connections: int = 10) -> AsyncEngine:
    """`connections`: the most a PostgreSQL pool opens (half kept, half overflow)."""
    url = async_url(database_url)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    kept = max(1, connections // 2)
    return create_async_engine(
        url, pool_pre_ping=True, pool_size=kept, max_overflow=max(0, connections - kept)
    )


def _no_autocheckpoint(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.execute("PRAGMA wal_autocheckpoint=0")


def _sqlite_file(engine: AsyncEngine) -> URL | None:
    """The synchronous (pysqlite) URL of the engine's SQLite file; None for anything else."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return url.set(drivername="sqlite+pysqlite")


def sqlite_writer(engine: AsyncEngine) -> Engine | None:
    """A synchronous engine on the same SQLite file for the recorder: its writer thread (one
    hop per group commit instead of several per statement) and its checkpoints, which it runs
    itself, off the commit path; None for PostgreSQL and in-memory databases, which the async
    engine serves."""
    url = _sqlite_file(engine)
    if url is None:
        return None
    writer = create_sync_engine(
        url,
        pool_size=2,  # the writer's connection and the checkpointer's
        max_overflow=0,
        connect_args={"check_same_thread": False},
    )
    event.listen(writer, "connect", _sqlite_pragmas)
    # A commit that crosses 1000 WAL pages would copy them into the database and fsync before
    # it returns, holding up every acknowledgement waiting on it.
    event.listen(writer, "connect", _no_autocheckpoint)
    return writer


def sqlite_reader(engine: AsyncEngine) -> Engine | None:
    """A synchronous engine on the same SQLite file for reads of several statements (a
    prompt's context), run together on a thread: one hop to it, where aiosqlite takes a few
    for every statement (about a millisecond each on a busy loop). None for PostgreSQL, whose
    async driver needs no thread, and for in-memory databases."""
    url = _sqlite_file(engine)
    if url is None:
        return None
    reader = create_sync_engine(
        url, pool_size=4, max_overflow=4, connect_args={"check_same_thread": False}
    )
    event.listen(reader, "connect", _sqlite_pragmas)
    return reader


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)
