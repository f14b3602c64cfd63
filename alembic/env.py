"""Alembic environment: the URL comes from the settings, the schema from SQLModel.metadata.

`uvicorn app.main:app` upgrades through `app.db.migrate`, which hands its own connection in
`config.attributes["connection"]`; the `alembic` command line (Heroku's release phase) opens
one here, and logs to stderr as alembic.ini says. Either way the last line says what was done.
"""

from __future__ import annotations

import asyncio
import logging
from logging.config import fileConfig

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import app.db.models  # noqa: F401  (registers the tables)
from app.db.migrate import MIGRATION_LOCK_KEY, ours

target_metadata = SQLModel.metadata
logger = logging.getLogger("alembic.env")


def run_with(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        # Several instances starting at once on one database: one migrates, the others wait
        # here to the end of its transaction, then find the schema at head.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=ours,
    )
    migration = context.get_context()
    before = migration.get_current_revision()
    with context.begin_transaction():
        context.run_migrations()
    after = migration.get_current_revision()
    if before == after:
        logger.info("database schema already at %s: nothing to do", after or "nothing")
    else:
        logger.info("database schema moved from %s to %s", before or "nothing", after or "nothing")


async def run_online() -> None:
    from app.db.engine import create_engine
    from app.settings import DatabaseSettings

    url = context.config.get_main_option("sqlalchemy.url") or DatabaseSettings().DATABASE_URL
    engine = create_engine(url)
    async with engine.begin() as connection:
        await connection.run_sync(run_with)
    await engine.dispose()


connection = context.config.attributes.get("connection")
if connection is not None:
    run_with(connection)
else:
    if context.config.config_file_name:
        fileConfig(context.config.config_file_name, disable_existing_loggers=False)
    if context.is_offline_mode():
        raise SystemExit("Offline SQL generation is not supported; run against a database.")
    asyncio.run(run_online())
