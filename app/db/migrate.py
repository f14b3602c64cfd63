"""Bring the schema to Alembic head at start-up (idempotent).

Importing Alembic costs a few hundred milliseconds, so when the database already records the
head revision (every start but the first after an upgrade) it is not imported at all. A web
process whose jobs run in a worker process apart migrates through a short-lived child
process (`alembic upgrade head`, as Heroku's release phase runs it): what Alembic imports,
with Mako under it, would otherwise stay in that process's memory for its whole life (about
10 MiB of the 512 MB a container has, docs/BENCHMARKS.md#memory).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

logger = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The newest revision in alembic/versions; tests/db/test_migrate.py keeps the two in step.
SCHEMA_HEAD = "0022"
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


class MigrationFailed(Exception):
    """The child process that migrates the database failed: the schema is as it was."""


async def _upgrade_apart(database_url: str) -> None:
    """`alembic upgrade head` in a child process on `database_url` (the setting, passed in its
    environment, never on its command line); its lines go to this process's log."""
    environment = {**os.environ, "DATABASE_URL": database_url}
    child = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "alembic", "-c", str(PROJECT_ROOT / "alembic.ini")),
        *("upgrade", "head"),
        env=environment,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        said, _ = await child.communicate()
    except BaseException:  # stopped meanwhile: the child's transaction is rolled back
        if child.returncode is None:
            child.kill()
            await child.wait()
        raise
    lines = said.decode(errors="replace").splitlines()
    for line in lines:
        logger.info("migration: %s", line)
    if child.returncode != 0:
        raise MigrationFailed(f"alembic upgrade head exited {child.returncode}: {lines[-5:]}")


async def upgrade_to_head(engine: AsyncEngine, *, apart: str | None = None) -> None:
    """`apart`: the DATABASE_URL of `engine`, to migrate in a child process (above); None:
    here, on `engine`."""
    revision = await current_revision(engine)
    if revision == SCHEMA_HEAD:
        logger.debug("database schema at head %s", revision)
        return
    logger.info(
        "upgrading database schema from %s to head%s",
        revision or "nothing",
        " in a process of its own" if apart else "",
    )
    if apart is not None:
        await _upgrade_apart(apart)
        return
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
