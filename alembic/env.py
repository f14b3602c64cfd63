"""Alembic environment: the URL comes from the settings, the schema from SQLModel.metadata.

`uvicorn app.main:app` upgrades through `app.db.migrate`, which hands its own connection in
`config.attributes["connection"]`; the `alembic` command line opens one here.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import app.db.models  # noqa: F401  (registers the tables)

target_metadata = SQLModel.metadata


def run_with(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


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
elif context.is_offline_mode():
    raise SystemExit("Offline SQL generation is not supported; run against a database.")
else:
    asyncio.run(run_online())
