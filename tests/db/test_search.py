"""app.db.search.service with any query on a real database (SQLite, or PostgreSQL with
TOMO_TEST_DATABASE_URL): no error, and never a message from outside the scope, whatever the
query holds (FTS5 syntax, LIKE wildcards, quotes, NULs, surrogates, any language)."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.db.search.index import catch_up
from app.db.search.service import Where, search
from app.db.search.terms import terms_of
from app.gate.scope import Scope

TEXTS = [
    'zebracorn "quoted" 100% done_ok NEAR(x) a*b',
    "明日の予算会議は10時から",
    "猫",
    "ok",
    "Ünïcödé ÄÖÜ straße",
]
PUBLIC = Scope(conversation="C1", private=frozenset())


async def _fill(url: str) -> None:
    engine = create_engine(url)
    await upgrade_to_head(engine)
    now = time.time()
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, "
                "updated_at) VALUES ('C1', 'T', 'general', false, false, true, 0), "
                "('G1', 'T', 'secret', true, false, true, 0)"
            )
        )
        for n, body in enumerate(TEXTS * 2):
            await connection.execute(
                text(
                    "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route,"
                    " text, kind, created_at, deleted) VALUES (:channel, :ts, 'T', '', '',"
                    " 'record', :text, 'conversational', :at, false)"
                ),
                {
                    "channel": "C1" if n < len(TEXTS) else "G1",
                    "ts": f"{int(now) - 100}.{n:06d}",
                    "text": body,
                    "at": now - 100,
                },
            )
    await catch_up(engine)
    await engine.dispose()


async def _channels(url: str, query: str, channel: str | None) -> list[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            where = Where(scope=PUBLIC, since=time.time() - 3600, channel=channel)
            rows = await search(connection, terms_of(query), where, limit=20)
    finally:
        await engine.dispose()
    return [row.channel for row in rows]


@pytest.fixture
def filled(database_url: str) -> str:
    asyncio.run(_fill(database_url))
    return database_url


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.text(max_size=30) | st.sampled_from(['"', "*", "%", "_", "\\", "会議", "ok", "猫"]),
    channel=st.sampled_from([None, "C1", "G1"]),
)
def test_any_query_finds_only_what_the_scope_allows(
    filled: str, query: str, channel: str | None
) -> None:
    assert set(asyncio.run(_channels(filled, query, channel))) <= {"C1"}


def test_the_words_of_the_fixture_are_found(filled: str) -> None:
    """The property above would hold for a search that finds nothing: it does find."""
    for query in ("zebracorn", "会議", "猫", "ok", "100%", "ÄÖÜ", ""):
        assert asyncio.run(_channels(filled, query, None)), query
    assert asyncio.run(_channels(filled, "secret", "G1")) == []
