"""Which conversations tomo takes part in (docs/how-tomo-works.md#follow-ups), read from its reply
claims and the top level's newest messages on a migrated database (SQLite, or PostgreSQL with
TOMO_TEST_DATABASE_URL), in the recorder's transaction: messages recorded together share one
read, and a follow-up is stored as one."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event, insert, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.conversation.timing.participation import Participation
from app.db.engine import create_engine, sqlite_reader
from app.db.migrate import upgrade_to_head
from app.db.models import Message, Reply
from app.domain import Route, RouteKind
from app.recording.recorder import NewMessage, Outcome, Recorder
from app.slack.events import IncomingMessage

NOW = time.time()
# What a database can hold (app.recording.isolation cleans NULs and surrogates before storing).
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


def participation(engine: AsyncEngine, bot_user: str | None = "UBOT") -> Participation:
    return Participation(
        engine=engine, reader=sqlite_reader(engine), window=1800, bot_user=lambda: bot_user
    )


def judged(channel: str, thread_ts: str, n: int) -> NewMessage:
    """A person's message in a thread (or at the top level: thread_ts "", the top level's
    conversation), routed to a judgment as routing does it for chatter."""
    message = IncomingMessage(
        channel=channel,
        ts=f"{NOW - 10 + n / 1000:.6f}",
        team_id="T1",
        thread_ts=thread_ts,
        user_id="U1",
        bot_id=None,
        text="and for six people?",
        subtype=None,
        channel_type="channel",
    )
    return NewMessage(message, Route(RouteKind.JUDGMENT, thread_ts))


async def record(engine: AsyncEngine, *messages: NewMessage) -> list[Outcome]:
    """Record the messages together, through a recorder that tells follow-ups."""
    watching = participation(engine)
    recorder = Recorder(engine, reroute=watching.follow_ups)
    recorder.start()
    try:
        return await asyncio.gather(
            *(recorder.record(event_id=None, change=message) for message in messages)
        )
    finally:
        await recorder.stop()
        watching.close()


async def stored_routes(engine: AsyncEngine) -> dict[str, str]:
    async with engine.connect() as connection:
        rows = await connection.execute(select(col(Message.ts), col(Message.route)))
        return {ts: route for ts, route in rows}


def kind(outcome: Outcome) -> RouteKind:
    return outcome.route.kind if outcome.route is not None else RouteKind.JUDGMENT


async def test_messages_recorded_together_share_one_read_and_are_stored_as_follow_ups(
    database_url: str,
) -> None:
    engine = await migrated(database_url)
    await claim(engine, "C1", "1700000000.000100")  # a mention's thread tomo answered
    await claim(engine, "C2", "1700000000.000200", status="failed")  # it said nothing there
    await claim(engine, "C3", "1700000000.000300", created_at=NOW - 7200, posted_at=NOW - 7199)
    # Its own top-level post (the judgment's answer), which someone answers in its thread.
    await claim(engine, "C4", "", reason="judgment", posted_ts="1700000000.000400")
    reads: list[str] = []

    def seen(*args: Any) -> None:
        reads.append(str(args[2]))

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        threads = [(1, "C1"), (2, "C2"), (3, "C3"), (4, "C1"), (4, "C4")]
        messages = [
            judged(channel, f"1700000000.000{n}00", len(threads) * i + k)
            for i in range(8)
            for k, (n, channel) in enumerate(threads)
        ]
        outcomes = await record(engine, *messages)
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    routes = await stored_routes(engine)
    await engine.dispose()
    kinds = [kind(outcome) for outcome in outcomes]
    expected = [RouteKind.FOLLOW_UP, RouteKind.JUDGMENT, RouteKind.JUDGMENT]
    expected += [RouteKind.JUDGMENT, RouteKind.FOLLOW_UP]
    assert kinds == expected * 8
    assert all(outcome.applied for outcome in outcomes)
    assert [routes[m.message.ts] for m in messages] == [k.value for k in kinds]
    claim_reads = [sql for sql in reads if "FROM reply" in sql]
    assert 1 <= len(claim_reads) <= len(messages) // 4  # one per group commit, not per message


async def test_the_top_level_counts_turns_since_tomos_post(database_url: str) -> None:
    engine = await migrated(database_url)
    await claim(engine, "C1", "", reason="judgment")
    await top_level(engine, "C1", "U1", "UBOT", "U1", "U1", "U2")
    # tomo, then Alice's two lines (one turn) and Bob's: tomo's post is the third turn back.
    (first,) = await record(engine, judged("C1", "", 1))
    await top_level(engine, "C1", "U3", start=5)  # Carol: a fourth turn since
    (second,) = await record(engine, judged("C1", "", 2))
    await engine.dispose()
    assert kind(first) is RouteKind.FOLLOW_UP
    assert kind(second) is RouteKind.JUDGMENT


async def test_before_tomo_knows_its_own_id_nothing_is_a_follow_up(database_url: str) -> None:
    engine = await migrated(database_url)
    await claim(engine, "C1", "1700000000.000100")
    watching = participation(engine, bot_user=None)
    async with engine.begin() as connection:
        found = await connection.run_sync(
            watching.follow_ups, [judged("C1", "1700000000.000100", 1)], NOW
        )
    watching.close()
    await engine.dispose()
    assert found == {}


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
    """Whatever channel, thread or user an event names, the read answers without an error
    (one that names no conversation tomo spoke in: not a follow-up)."""

    async def run() -> dict[tuple[str, str], Route]:
        engine = await migrated(database_url)
        watching = participation(engine, bot_user=user_id)
        message = NewMessage(
            judged(channel, thread_ts, 1).message, Route(RouteKind.JUDGMENT, thread_ts)
        )
        try:
            async with engine.begin() as connection:
                return await connection.run_sync(watching.follow_ups, [message], NOW)
        finally:
            watching.close()
            await engine.dispose()

    assert asyncio.run(run()) == {}


async def test_a_failed_read_leaves_its_messages_a_judgments_and_loses_none(
    database_url: str,
) -> None:
    """The messages are stored all the same (on PostgreSQL the read's savepoint keeps the
    transaction going), and the next batch reads again."""
    engine = await migrated(database_url)
    await claim(engine, "C1", "1700000000.000100")
    async with engine.begin() as connection:
        await connection.execute(text("ALTER TABLE reply RENAME TO reply_away"))
    failed = await record(engine, *(judged("C1", "1700000000.000100", n) for n in range(5)))
    async with engine.begin() as connection:
        await connection.execute(text("ALTER TABLE reply_away RENAME TO reply"))
    (after,) = await record(engine, judged("C1", "1700000000.000100", 6))
    routes = await stored_routes(engine)
    await engine.dispose()
    assert [(o.applied, kind(o)) for o in failed] == [(True, RouteKind.JUDGMENT)] * 5
    assert sorted(routes.values()) == ["follow_up"] + ["judgment"] * 5
    assert kind(after) is RouteKind.FOLLOW_UP
