"""The schema comes from Alembic (docs/how-tomo-works.md#interfaces): SCHEMA_HEAD in step with the
scripts, upgrades idempotent, the models and the migrations agreeing, and the CLI the Procfile
runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from app.db.engine import create_engine
from app.db.migrate import (
    PROJECT_ROOT,
    SCHEMA_HEAD,
    MigrationFailed,
    _upgrade,
    current_revision,
    ours,
    upgrade_to_head,
)
from tests.conftest import TEST_DATABASE_URL

TABLES = {
    "channel",
    "person",
    "message",
    "seen_event",
    "judgment",
    "reply",
    "memory",
    "llm_call",
    "channel_control",
    "on_it",
    "removal",
    "erasure",
}


def alembic_head() -> str | None:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()


def schema_differences(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"include_name": ours})
    return list(compare_metadata(context, SQLModel.metadata))


def table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def test_schema_head_is_alembics_head() -> None:
    assert SCHEMA_HEAD == alembic_head()


async def test_upgrade_twice_is_idempotent_and_matches_the_models(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        assert await current_revision(engine) is None
        await upgrade_to_head(engine)
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, "
                    "updated_at) VALUES ('C1', 'T1', 'general', false, false, true, 0)"
                )
            )
        await upgrade_to_head(engine)  # at head: nothing to do
        async with engine.begin() as connection:
            await connection.run_sync(_upgrade)  # Alembic itself, once more
        assert await current_revision(engine) == SCHEMA_HEAD
        async with engine.connect() as connection:
            tables = await connection.run_sync(table_names)
            differences = await connection.run_sync(schema_differences)
            kept = (await connection.execute(text("SELECT name FROM channel"))).scalars().all()
    finally:
        await engine.dispose()
    assert TABLES <= tables
    assert differences == []
    assert kept == ["general"]


async def test_a_migration_apart_that_fails_says_so_and_leaves_the_schema_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The child process cannot open its database (a file where no file can be): start-up
    stops with its words, and the database the server opened is as it was."""
    engine = create_engine(f"sqlite:///{tmp_path / 'tomo.db'}")
    caplog.set_level("INFO", logger="app.db.migrate")
    try:
        with pytest.raises(MigrationFailed) as failed:
            await upgrade_to_head(engine, apart="sqlite:////proc/no-database-here/tomo.db")
        assert await current_revision(engine) is None
    finally:
        await engine.dispose()
    assert "exited 1" in str(failed.value)
    assert any("migration: " in r.getMessage() for r in caplog.records)  # its words, logged


async def test_alembic_upgrade_head_from_the_command_line(
    database_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    env["DATABASE_URL"] = database_url  # the release phase has no other setting it needs
    command = [sys.executable, "-m", "alembic", "-c", str(PROJECT_ROOT / "alembic.ini")]
    said = []
    for _ in range(2):
        done = await asyncio.to_thread(
            subprocess.run,
            [*command, "upgrade", "head"],
            cwd=tmp_path,  # any directory
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        said.append(done.stderr.splitlines())
    # It says what it did (Heroku shows the release phase's output): each migration, then where
    # the schema went; the second time, that there was nothing to do.
    assert "INFO  [alembic.runtime.migration] Running upgrade  -> 0001, initial schema" in said[0]
    assert said[0][-1] == f"INFO  [alembic.env] database schema moved from nothing to {SCHEMA_HEAD}"
    assert not [line for line in said[1] if "Running upgrade" in line]
    assert (
        said[1][-1]
        == f"INFO  [alembic.env] database schema already at {SCHEMA_HEAD}: nothing to do"
    )
    engine = create_engine(database_url)
    try:
        assert await current_revision(engine) == SCHEMA_HEAD
        async with engine.connect() as connection:
            assert TABLES <= await connection.run_sync(table_names)
    finally:
        await engine.dispose()


def _upgrade_to(revision: str) -> Any:
    def upgrade(connection: Connection) -> None:
        from alembic import command

        config = Config(str(PROJECT_ROOT / "alembic.ini"))
        config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    return upgrade


async def test_0003_classifies_the_messages_stored_before_it(database_url: str) -> None:
    """Rows stored before message kinds existed: system subtypes become system rows (a hidden
    message_replied stored as a message among them), tombstones from thread history become
    deleted rows, and conversation stays conversation. At head (0013) a deleted row is
    deleted, its removal noted (ts and times only)."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_upgrade_to("0002"))
            for ts, subtype, text_ in [
                ("1.000001", None, "hello"),
                ("1.000002", "bot_message", "build passed"),
                ("1.000003", "channel_join", "<@U2> has joined the channel"),
                ("1.000004", "message_replied", ""),
                ("1.000005", "tombstone", "This message was deleted."),
                ("1.000006", "thread_broadcast", "also in the channel"),
            ]:
                await connection.execute(
                    text(
                        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, "
                        "route, text, subtype, created_at, deleted) VALUES ('C1', :ts, 'T1', '', "
                        "'', 'record', :text, :subtype, 1, false)"
                    ),
                    {"ts": ts, "text": text_, "subtype": subtype},
                )
        await upgrade_to_head(engine)
        async with engine.connect() as connection:
            rows = (
                await connection.execute(
                    text("SELECT ts, kind, deleted, text FROM message ORDER BY ts")
                )
            ).all()
            removals = (await connection.execute(text("SELECT channel, ts FROM removal"))).all()
    finally:
        await engine.dispose()
    assert [(r[0], r[1], bool(r[2]), r[3]) for r in rows] == [
        ("1.000001", "conversational", False, "hello"),
        ("1.000002", "conversational", False, "build passed"),
        ("1.000003", "system", False, "<@U2> has joined the channel"),
        ("1.000004", "system", False, ""),
        ("1.000006", "conversational", False, "also in the channel"),
    ]
    assert [tuple(r) for r in removals] == [("C1", "1.000005")]


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="several instances share PostgreSQL")
async def test_instances_starting_together_migrate_a_fresh_database_once(
    database_url: str, tmp_path: Path
) -> None:
    """Several tomo processes started at once on an empty database (a deploy of several
    instances) each bring the schema to head as `uvicorn app.main:app` does at start-up: one
    migrates it, the others wait and find it done; none fails on a table another creates."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    script = (
        "import asyncio\n"
        "from app.db.engine import create_engine\n"
        "from app.db.migrate import upgrade_to_head\n"
        f"engine = create_engine({database_url!r})\n"
        "asyncio.run(upgrade_to_head(engine))\n"
    )

    def start() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = await asyncio.gather(*(asyncio.to_thread(start) for _ in range(4)))
    assert [d.returncode for d in done] == [0] * 4, [d.stderr[-800:] for d in done]
    engine = create_engine(database_url)
    try:
        assert await current_revision(engine) == SCHEMA_HEAD
    finally:
        await engine.dispose()
