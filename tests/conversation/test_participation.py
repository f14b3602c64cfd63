"""Which conversations tomo takes part in (docs/how-tomo-works.md#follow-ups), read from its reply
claims and the top level's newest messages on a migrated database (SQLite, or PostgreSQL with
TOMO_TEST_DATABASE_URL); messages asking together share one read."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert, text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.conversation.participation import Participation
from app.db.engine import create_engine, sqlite_reader
from app.db.migrate import upgrade_to_head
from app.db.models import Message, Reply
from app.domain import Route, RouteKind

NOW = time.time()
# What a database can hold (app.db.isolation cleans NULs and surrogates before storing).
TEXT = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")


async def migrated(database_url: str) -> AsyncEngine:
    engine = create_engine(database_url)
    await upgrade_to_head(engine)
    return engine


async def claim(engine: AsyncEngine, channel: str, thread_ts: str, **row: Any) -> None:
    values = {
        "channel": channel,
        "thread_ts": thread_ts,
        "trigger_ts": f"{NOW - 60:.6f}",
        "reason": "mention",
        "status": "posted",
        "created_at": NOW - 60,
        "posted_at": NOW - 59,
    } | row
    async with engine.begin() as connection:
        await connection.execute(insert(Reply).values(values))


async def top_level(engine: AsyncEngine, channel: str, *speakers: str, start: int = 0) -> None:
    """Top-level messages by these users, oldest first, a second apart from `start`."""
    async with engine.begin() as connection:
        for n, user in enumerate(speakers, start=start):
            at = NOW - 50 + n
            await connection.execute(
                insert(Message).values(
                    channel=channel, ts=f"{at:.6f}", user_id=user, text="hi", created_at=at
                )
            )


def judged(thread_ts: str) -> Route:
    return Route(RouteKind.JUDGMENT, thread_ts)


async def test_many_messages_asking_together_share_one_read(database_url: str) -> None:
    engine = await migrated(database_url)
    await claim(engine, "C1", "1700000000.000100")  # a mention's thread tomo answered
    await claim(engine, "C2", "1700000000.000200", status="failed")  # it said nothing there
    await claim(engine, "C3", "1700000000.000300", created_at=NOW - 7200, posted_at=NOW - 7199)
    reader = sqlite_reader(engine)
    reads: list[str] = []
    watched = reader if reader is not None else engine.sync_engine
    event.listen(watched, "before_cursor_execute", lambda *args: reads.append(str(args[2])))
    participation = Participation(engine=engine, reader=reader, window=1800)
    asks = [
        (channel, f"1700000000.000{n}00")
        for n, channel in ((1, "C1"), (2, "C2"), (3, "C3"), (4, "C1"))
        for _ in range(10)
    ]
    routes = await asyncio.gather(
        *(
            participation.route(judged(thread), channel=channel, user_id="UBOT", now=NOW)
            for channel, thread in asks
        )
    )
    participation.close()
    await engine.dispose()
    kinds = [r.kind for r in routes]
    assert kinds == [RouteKind.FOLLOW_UP] * 10 + [RouteKind.JUDGMENT] * 30
    claim_reads = [sql for sql in reads if "FROM reply" in sql]
    assert 1 <= len(claim_reads) <= 2  # the first message's read, then everyone else's


async def test_the_top_level_counts_turns_since_tomos_post(database_url: str) -> None:
    engine = await migrated(database_url)
    await claim(engine, "C1", "", reason="judgment")
    await top_level(engine, "C1", "U1", "UBOT", "U1", "U1", "U2")
    participation = Participation(engine=engine, reader=sqlite_reader(engine), window=1800)

    async def follows() -> bool:
        route = await participation.route(judged(""), channel="C1", user_id="UBOT", now=NOW)
        return route.kind is RouteKind.FOLLOW_UP

    # tomo, then Alice's two lines (one turn) and Bob's: tomo's post is the third turn back.
    assert await follows()
    await top_level(engine, "C1", "U3", start=5)  # Carol: a fourth turn since
    assert not await follows()
    participation.close()
    await engine.dispose()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    channel=st.text(TEXT, max_size=40),
    thread_ts=st.text(TEXT, max_size=40),
    user_id=st.one_of(st.none(), st.text(TEXT, max_size=40)),
)
def test_any_conversation_gets_an_answer_and_no_error(
    database_url: str, channel: str, thread_ts: str, user_id: str | None
) -> None:
    """Whatever channel, thread or user an event names, routing gets a route back."""

    async def run() -> Route:
        engine = await migrated(database_url)
        participation = Participation(engine=engine, reader=sqlite_reader(engine), window=1800)
        try:
            return await participation.route(
                judged(thread_ts), channel=channel, user_id=user_id, now=NOW
            )
        finally:
            participation.close()
            await engine.dispose()

    route = asyncio.run(run())
    assert route.conversation_ts == thread_ts and route.kind is RouteKind.JUDGMENT


async def test_a_failed_read_fails_its_batch_and_the_next_one_reads_again(
    database_url: str,
) -> None:
    """The intake keeps a message a judgment's when this fails (app.conversation.intake)."""
    engine = await migrated(database_url)
    await claim(engine, "C1", "1700000000.000100")
    participation = Participation(engine=engine, reader=sqlite_reader(engine), window=1800)
    async with engine.begin() as connection:
        await connection.execute(text("ALTER TABLE reply RENAME TO reply_away"))
    failed = await asyncio.gather(
        *(
            participation.route(judged("1700000000.000100"), channel="C1", user_id="UBOT", now=NOW)
            for _ in range(5)
        ),
        return_exceptions=True,
    )
    async with engine.begin() as connection:
        await connection.execute(text("ALTER TABLE reply_away RENAME TO reply"))
    route = await participation.route(
        judged("1700000000.000100"), channel="C1", user_id="UBOT", now=NOW
    )
    participation.close()
    await engine.dispose()
    assert all(isinstance(outcome, Exception) for outcome in failed)
    assert route.kind is RouteKind.FOLLOW_UP
