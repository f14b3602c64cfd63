"""The search index follows every deletion (docs/data-and-privacy.md): the retention, Slack's
message_deleted, `/tomo forget`, a deleted channel and an uninstall take a message's words out
of the index with its row, an edit replaces them, and a row that takes a deleted one's place
(SQLite gives its rowid again) is found by its own words only. On SQLite the index is an FTS5
table kept by triggers, and it is asked directly; on PostgreSQL it is an index of the row."""

from __future__ import annotations

import asyncio
import time

from alembic import command
from alembic.config import Config
from sqlalchemy import text as sql

from app.db.engine import create_engine
from app.db.migrate import PROJECT_ROOT, upgrade_to_head
from app.db.search.index import catch_up
from app.tools.search_messages import NOTHING, SearchMessages
from tests.conftest import StartTomo, Tomo, next_ts, wait_for
from tests.fakes.response_url import FakeResponseUrl
from tests.retention.stored import DAY, put_message, ts_at
from tests.slash import run_command
from tests.tools.kit import kit_of
from tests.tools.workspace import asker

RETENTION = {"MESSAGE_RETENTION_DAYS": 7, "ACTIVE_CHANNEL_DAYS": 7, "THREAD_MEMORY_DAYS": 7}
WORDS = ("zebracorn", "秘密会議", "予算案")


async def indexed(tomo: Tomo, word: str) -> int:
    """Messages the index holds this word for."""
    if tomo.runtime.engine.dialect.name == "sqlite":
        await catch_up(tomo.runtime.engine)
        query = "SELECT count(*) AS n FROM message_search WHERE message_search MATCH :q"
        return int(
            (await tomo.rows(query, q=f'"{word}  "' if len(word) < 3 else f'"{word}"'))[0]["n"]
        )
    rows = await tomo.rows("SELECT count(*) AS n FROM message WHERE text ILIKE :q", q=f"%{word}%")
    return int(rows[0]["n"])


async def found(tomo: Tomo, word: str) -> str:
    return (await SearchMessages(kit_of(tomo)).run({"query": word}, asker=asker("C1"))).text


async def seed(tomo: Tomo, channel: str, at: float, n: int = 0) -> None:
    for k, word in enumerate(WORDS):
        await put_message(tomo, channel=channel, ts=ts_at(at, n + k), text=f"{channel}: {word}")


async def test_the_retention_takes_expired_words_out(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60, **RETENTION) as tomo:
        await tomo.runtime.purge.run()
        await seed(tomo, "C1", time.time() - 8 * DAY)
        await put_message(tomo, channel="C1", ts=ts_at(time.time() - DAY), text="fresh 会議です")
        before = [await indexed(tomo, w) for w in WORDS]
        await tomo.runtime.purge.run()
        after = [await indexed(tomo, w) for w in WORDS]
        fresh = await indexed(tomo, "会議で")
        short = await found(tomo, "予算")
    assert before == [1, 1, 1] and after == [0, 0, 0] and fresh == 1
    assert short == NOTHING


async def test_a_message_slack_deleted_leaves_the_index_and_an_edit_replaces_its_words(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        gone = await tomo.message("the zebracorn plan", channel="C1")
        edited = await tomo.message("the 予算案 is fixed", channel="C1")
        await wait_for(lambda: indexed(tomo, "予算案"), what="the messages indexed")
        deletion = {
            "type": "message",
            "subtype": "message_deleted",
            "channel": "C1",
            "deleted_ts": gone,
            "ts": next_ts(),
        }
        edit = {
            "type": "message",
            "subtype": "message_changed",
            "channel": "C1",
            "message": {
                "type": "message",
                "user": "U1",
                "text": "the budget is fixed",
                "ts": edited,
                "edited": {"user": "U1", "ts": next_ts()},
            },
            "previous_message": {"ts": edited, "text": "the 予算案 is fixed"},
            "ts": next_ts(),
        }
        assert (await tomo.event(deletion)).status_code == 200
        assert (await tomo.event(edit)).status_code == 200
        await wait_for(lambda: indexed(tomo, "budget"), what="the edit")
        counts = [await indexed(tomo, w) for w in ("zebracorn", "予算案", "budget")]
        texts = [await found(tomo, w) for w in ("zebracorn", "予算", "budget")]
    assert counts == [0, 0, 1]
    assert texts[0] == texts[1] == NOTHING and "the budget is fixed" in texts[2]


async def test_forget_takes_the_channels_words_out(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await seed(tomo, "C1", time.time() - 60)
        await seed(tomo, "C2", time.time() - 60, 10)
        answer = await run_command(tomo, "forget", response_url=hooks.new_url())
        # What the forget does after its answer (the workspace memory rebuilt) ends first.
        later = [t for t in tomo.runtime.background if t.get_name() == "command-later"]
        if later:
            await asyncio.wait(later, timeout=30)
        counts = [await indexed(tomo, w) for w in WORDS]
        elsewhere = await found(tomo, "秘密会議")
    assert "3" in answer["text"]  # messages deleted (it says so in the channel's language)
    assert counts == [1, 1, 1]  # C2's, still there
    assert "C2: 秘密会議" in elsewhere


async def erased(tomo: Tomo) -> bool:
    rows = await tomo.rows("SELECT done_at FROM erasure WHERE reason != 'left'")
    return bool(rows) and all(r["done_at"] is not None for r in rows)


async def test_a_deleted_channel_and_an_uninstall_take_their_words_out(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await seed(tomo, "C1", time.time() - 60)
        await seed(tomo, "C2", time.time() - 60, 10)
        assert (await tomo.event({"type": "channel_deleted", "channel": "C1"})).status_code == 200
        await wait_for(lambda: erased(tomo), timeout=30, what="the channel's erasure")
        after_channel = [await indexed(tomo, w) for w in WORDS]
        assert (await tomo.event({"type": "app_uninstalled"})).status_code == 200
        await wait_for(lambda: tomo.rows("SELECT 1 FROM erasure WHERE scope = 'team'"))
        await wait_for(lambda: erased(tomo), timeout=30, what="the workspace's erasure")
        after_uninstall = [await indexed(tomo, w) for w in WORDS]
    assert after_channel == [1, 1, 1] and after_uninstall == [0, 0, 0]


async def test_a_row_in_a_deleted_rows_place_is_found_by_its_own_words(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        now = time.time() - 60
        await put_message(tomo, channel="C1", ts=ts_at(now, 1), text="keep this")
        await put_message(tomo, channel="C1", ts=ts_at(now, 2), text="zebracorn 秘密会議")
        async with tomo.runtime.engine.begin() as connection:  # the newest row goes...
            await connection.execute(sql("DELETE FROM message WHERE text LIKE 'zebracorn%'"))
        # ...and the next takes its rowid on SQLite.
        await put_message(tomo, channel="C1", ts=ts_at(now, 3), text="an innocent message")
        texts = [await found(tomo, w) for w in ("zebracorn", "秘密会議", "innocent")]
    assert texts[0] == texts[1] == NOTHING and "an innocent message" in texts[2]


async def test_the_migration_indexes_the_messages_stored_before_it(database_url: str) -> None:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    engine = create_engine(database_url)
    try:

        def to_0014(connection: object) -> None:
            config.attributes["connection"] = connection
            command.upgrade(config, "0014")

        async with engine.begin() as connection:
            await connection.run_sync(to_0014)
            for n, word in enumerate(WORDS):
                await connection.execute(
                    sql(
                        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts,"
                        " route, text, kind, created_at, deleted) VALUES ('C1', :ts, 'T1', '',"
                        " '', 'record', :text, 'conversational', :at, false)"
                    ),
                    {"ts": f"{int(time.time())}.{n:06d}", "text": f"old {word}", "at": time.time()},
                )
        await upgrade_to_head(engine)
        async with engine.connect() as connection:
            if engine.dialect.name == "sqlite":
                query = "SELECT count(*) FROM message_search WHERE message_search MATCH 'old'"
            else:
                query = "SELECT count(*) FROM pg_indexes WHERE indexname = 'ix_message_text_trgm'"
            counted = await connection.scalar(sql(query))
    finally:
        await engine.dispose()
    assert counted == (3 if engine.dialect.name == "sqlite" else 1)
