"""Bring the schema to Alembic head at start-up (idempotent).

Importing Alembic costs a few hundred milliseconds, so when the database already records the
head revision (every start but the first after an upgrade) it is not imported at all.
"""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

logger = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The newest revision in alembic/versions; tests/db/test_migrate.py keeps the two in step.
SCHEMA_HEAD = "0020"
# The advisory lock that migrations take on PostgreSQL (alembic/env.py), so instances starting
# together migrate a database once; any constant would do ("migr").
MIGRATION_LOCK_KEY = 0x6D696772


# What migrations build beside the models: Procrastinate's tables (applied whole by 0008), and
# the search index of messages (0015: SQLite's FTS5 table and its own tables, PostgreSQL's
# trigram index), which no SQLModel model describes.
_NOT_MODELS = {"table": ("procrastinate_", "message_search"), "index": ("ix_message_text_trgm",)}


def ours(name: str | None, kind: str, _parents: object = None) -> bool:
    """For Alembic's comparisons of the database with the models: only what the models
    describe."""
    return not (name or "").startswith(_NOT_MODELS.get(kind, ()))


async def current_revision(engine: AsyncEngine) -> str | None:
    try:
        async with engine.connect() as connection:
            result = await connection.execute(text("SELECT version_num FROM alembic_version"))
            return result.scalar_one_or_none()
    except DBAPIError:
        return None


def _upgrade(connection: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


async def upgrade_to_head(engine: AsyncEngine) -> None:
    revision = await current_revision(engine)
    if revision == SCHEMA_HEAD:
        logger.debug("database schema at head %s", revision)
        return
    logger.info("upgrading database schema from %s to head", revision or "nothing")
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
