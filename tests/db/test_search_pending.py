"""SQLite's search index takes stored messages in batches (migration 0019, app.db.search.index):
whatever order messages are stored, edited, deleted (their rowids given again) and indexed in,
once the pending ones are indexed the index holds exactly the words of the messages there are;
the recorder indexes them on its own within a few seconds, and a search indexes them first."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.db.search.index import INDEX_PENDING_SQL
from app.tools.search_messages import SearchMessages
from tests.conftest import StartTomo, wait_for
from tests.retention.stored import put_message, ts_at
from tests.tools.kit import kit_of
from tests.tools.workspace import asker

WORDS = ("zebracorn", "quokka", "秘密会議", "予算案", "lighthouse")
INSERT = (
    "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, text, kind,"
    " created_at, deleted) VALUES ('C1', ?, 'T1', '', '', 'record', ?, 'conversational', 0,"
    " false)"
)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file at the schema's head (tests copy it)."""
    path = tmp_path_factory.mktemp("pending") / "head.db"
    engine = create_engine(f"sqlite:///{path}")

    async def migrate() -> None:
        await upgrade_to_head(engine)
        await engine.dispose()

    asyncio.run(migrate())
    return path


@pytest.fixture
def db(migrated: Path, tmp_path: Path) -> Iterator[sqlite3.Connection]:
    copy = tmp_path / "db.sqlite"
    copy.write_bytes(migrated.read_bytes())
    connection = sqlite3.connect(copy, isolation_level=None)
    yield connection
    connection.close()


def matches(db: sqlite3.Connection, word: str) -> int:
    query = "SELECT count(*) FROM message_search WHERE message_search MATCH ?"
    return int(db.execute(query, (f'"{word}"',)).fetchone()[0])


def index(db: sqlite3.Connection) -> None:
    db.execute("BEGIN")
    for statement in INDEX_PENDING_SQL:
        db.execute(statement)
    db.execute("COMMIT")


# Storing a message again, as app.recording.messages does: an upsert whose update is an edit.
STORE_AGAIN = (
    "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, text, kind,"
    " created_at, deleted) VALUES ('C1', ?, 'T1', '', '', 'record', ?, 'conversational', 0,"
    " false) ON CONFLICT (channel, ts) DO UPDATE SET text = excluded.text"
    " WHERE message.text != excluded.text"
)

# An operation: store a message with these words, edit the n-th live message to these
# words (an UPDATE, or the same message stored again), delete the n-th live message (its
# rowid may be given again), or index what waits.
operations = st.lists(
    st.one_of(
        st.tuples(st.just("store"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
        st.tuples(st.just("edit"), st.integers(0, 20), st.lists(st.sampled_from(WORDS))),
        st.tuples(st.just("store again"), st.integers(0, 20), st.lists(st.sampled_from(WORDS))),
        st.tuples(st.just("delete"), st.integers(0, 20)),
        st.tuples(st.just("index")),
    ),
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=operations)
def test_the_index_holds_exactly_the_words_of_the_messages_there_are(
    db: sqlite3.Connection, steps: list[tuple[object, ...]]
) -> None:
    db.execute("DELETE FROM message")  # a fresh start for each example, through the triggers
    index(db)
    counter = 0
    for step in steps:
        live = [row[0] for row in db.execute("SELECT ts FROM message ORDER BY rowid")]
        if step[0] == "store":
            counter += 1
            db.execute(INSERT, (f"1.{counter:06d}", " ".join(step[1])))  # type: ignore[arg-type]
        elif step[0] == "edit" and live:
            ts = live[int(step[1]) % len(live)]  # type: ignore[call-overload]
            text = " ".join(step[2])  # type: ignore[arg-type]
            db.execute("UPDATE message SET text = ? WHERE ts = ?", (text, ts))
        elif step[0] == "store again" and live:
            ts = live[int(step[1]) % len(live)]  # type: ignore[call-overload]
            db.execute(STORE_AGAIN, (ts, " ".join(step[2])))  # type: ignore[arg-type]
        elif step[0] == "delete" and live:
            db.execute("DELETE FROM message WHERE ts = ?", (live[int(step[1]) % len(live)],))  # type: ignore[call-overload]
        elif step[0] == "index":
            index(db)
    index(db)
    texts = [row[0] for row in db.execute("SELECT text FROM message")]
    assert db.execute("SELECT count(*) FROM message_search_pending").fetchone()[0] == 0
    for word in WORDS:
        assert matches(db, word) == sum(word in text for text in texts), word


def test_a_deleted_messages_rowid_given_again_is_found_by_its_own_words(
    db: sqlite3.Connection,
) -> None:
    db.execute(INSERT, ("1.000001", "zebracorn"))
    index(db)
    db.execute("DELETE FROM message WHERE ts = '1.000001'")
    db.execute(INSERT, ("1.000002", "quokka"))  # SQLite gives the same rowid again
    rowids = [row[0] for row in db.execute("SELECT rowid FROM message")]
    index(db)
    assert rowids == [1]
    assert (matches(db, "zebracorn"), matches(db, "quokka")) == (0, 1)


async def test_the_recorder_indexes_new_messages_on_its_own(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        if tomo.runtime.engine.dialect.name != "sqlite":
            pytest.skip("PostgreSQL's index is an index of the row")
        await put_message(tomo, channel="C1", ts=ts_at(time.time(), 1), text="lighthouse keeper")
        pending = "SELECT count(*) AS n FROM message_search_pending"

        async def indexed() -> bool:
            return (await tomo.rows(pending))[0]["n"] == 0

        await wait_for(indexed, timeout=30)
        match = "SELECT count(*) AS n FROM message_search WHERE message_search MATCH 'lighthouse'"
        assert (await tomo.rows(match))[0]["n"] == 1


async def test_a_search_finds_a_message_stored_a_moment_ago(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await put_message(tomo, channel="C1", ts=ts_at(time.time(), 1), text="quokka sighting")
        found = await SearchMessages(kit_of(tomo)).run({"query": "quokka"}, asker=asker("C1"))
    assert "quokka sighting" in found.text
