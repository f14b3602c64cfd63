"""The lively-channel pace (docs/how-tomo-works.md#the-quiet-wait): the quiet wait before a
judgment shrinks with how many messages people wrote in the channel lately, never below its
floor; a quiet channel waits MIN_WAIT_SECONDS; one judgment per burst, with either backend and
across a fleet. Signed events in; Slack and the model are the stand-ins."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from sqlalchemy import event
from sqlalchemy import text as sql

from app.conversation.timing.pace import (
    CHANNELS_PER_STATEMENT,
    MOST_COUNTED,
    QUIET_PACE,
    channel_paces,
    most_counted,
    paced_wait,
    with_pace,
)
from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from tests.conftest import (
    TEST_DATABASE_URL,
    StartTomo,
    judgment_json,
    next_ts,
    purpose_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.processes import Server, server
from tests.recording.test_isolation import message
from tests.test_restart import answer_by_purpose

__all__ = ["server"]  # the fixture

BACKENDS = [
    "apscheduler",
    pytest.param(
        "procrastinate",
        marks=pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's"),
    ),
]
LIVELY = 26  # messages in a burst: the last one follows 25, a wait of MIN_WAIT * 5 / 25


def test_the_rule() -> None:
    assert paced_wait(min_wait=300, floor=60, pace=0) == 300
    assert paced_wait(min_wait=300, floor=60, pace=QUIET_PACE) == 300
    assert paced_wait(min_wait=300, floor=60, pace=2 * QUIET_PACE) == 150
    assert paced_wait(min_wait=300, floor=60, pace=100) == 60  # the floor
    assert paced_wait(min_wait=30, floor=60, pace=100) == 30  # never longer than a quiet wait
    spread = [paced_wait(min_wait=300, floor=60, pace=20, jitter_ratio=0.5) for _ in range(200)]
    assert min(spread) >= 60 and max(spread) <= 75 * 1.5 and len(set(spread)) > 1
    # Counting stops where the wait reaches the floor: 26 messages with the defaults.
    assert most_counted(min_wait=300, floor=60) == 26
    assert paced_wait(min_wait=300, floor=60, pace=26) == 60
    assert most_counted(min_wait=300, floor=0) == MOST_COUNTED


def purposes(model: FakeModel) -> list[str]:
    asked = (purpose_of(request) for request in model.requests)
    return [purpose for purpose in asked if purpose in ("judgment", "reply")]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_lively_channel_is_judged_sooner_and_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, backend: str
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    settings = {
        "JOB_BACKEND": backend,
        "MIN_WAIT_SECONDS": 20.0,
        "PACE_MIN_WAIT_SECONDS": 0.5,
        "JITTER_RATIO": 0,
    }
    async with start_tomo(**settings) as tomo:
        stamps = []
        for number in range(LIVELY):
            user = ("U1", "U2")[number % 2]
            stamps.append(await tomo.message(f"line {number}", user=user))
        (timer,) = await tomo.timers("judgment")
        assert timer.latest_ts == stamps[-1]
        # Set on the last message's acknowledgement: 20 * 5 / 25 = 4 s, not the quiet 20 s.
        assert timer.seconds_left is not None and timer.seconds_left <= 4.0
        sql = "SELECT latest_ts FROM judgment"
        await wait_for(lambda: tomo.rows(sql), timeout=30, what="the judgment")
        await asyncio.sleep(0.5)
        decisions = await tomo.rows(sql)
    assert decisions == [{"latest_ts": stamps[-1]}]
    assert purposes(model) == ["judgment"]


async def test_a_quiet_channel_waits_the_quiet_time(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    settings = {
        "MIN_WAIT_SECONDS": 60.0,
        "PACE_MIN_WAIT_SECONDS": 0.5,
        "PACE_WINDOW_SECONDS": 30.0,
        "JITTER_RATIO": 0,
    }
    async with start_tomo(**settings) as tomo:
        long_ago = float(next_ts()) - 120
        for number in range(10):  # before the window
            await tomo.message(f"old {number}", ts=f"{long_ago + number:.6f}")
        for number in range(10):  # bots, and another channel, do not count
            await tomo.message(f"build {number} ok", user=None, bot_id="BCI", subtype="bot_message")
            await tomo.message(f"elsewhere {number}", channel="C2")
        await tomo.message("anyone around?")
        timers = await tomo.timers("judgment")
        routes = await tomo.rows("SELECT DISTINCT route FROM message WHERE channel = 'C1'")
    (timer,) = [t for t in timers if t.channel == "C1"]
    assert timer.seconds_left is not None and timer.seconds_left > 30
    assert {r["route"] for r in routes} == {"judgment", "record"}
    assert purposes(model) == []


async def test_the_pace_can_be_turned_off(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    settings = {"MIN_WAIT_SECONDS": 60.0, "PACE_WINDOW_SECONDS": 0, "JITTER_RATIO": 0}
    async with start_tomo(**settings, PACE_MIN_WAIT_SECONDS=0.5) as tomo:
        for number in range(LIVELY):
            await tomo.message(f"line {number}", user=("U1", "U2")[number % 2])
        (timer,) = await tomo.timers("judgment")
    assert timer.seconds_left is not None and timer.seconds_left > 30


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_a_lively_burst_spread_over_a_fleet_is_judged_sooner_and_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="sounds good")
    fleet = {
        "JOB_BACKEND": "procrastinate",
        "JOB_WORKER": "inline",
        # The default window (10 minutes) holds the burst however slowly a busy machine
        # delivers it; the wait that follows it is 40 * 5 / 25 = 8 s, long enough for the
        # next message of the burst to come first.
        "MIN_WAIT_SECONDS": "40",
        "PACE_MIN_WAIT_SECONDS": "0.5",
        "JITTER_RATIO": "0",
    }
    instances = [server(**fleet) for _ in range(3)]
    await asyncio.gather(*(i.start(timeout=WORKER_WAIT_SECONDS) for i in instances))
    for number in range(LIVELY):
        # Each instance sees a third of the burst; the pace is the whole channel's.
        await instances[number % 3].message(f"line {number}", user=("U1", "U2")[number % 2])
    (job,) = [j for j in await instances[0].jobs() if j["kind"] == "judgment"]
    assert job["id"] == "judgment:C1:" and job["seconds_left"] <= 40 * 5 / 25
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(2.0)  # nothing more comes
    assert purposes(model) == ["judgment", "reply"]
    assert len(slack.posts()) == 1
    for instance in instances:
        assert await instance.stop(), instance.output()


async def test_a_channel_at_the_floors_pace_is_not_counted_again_for_a_while(
    database_url: str,
) -> None:
    """A channel counted at the floor's pace keeps it for `recount` seconds without a count;
    a channel below it is counted on every batch (a fleet's burst is seen whole)."""
    engine = create_engine(database_url)
    await upgrade_to_head(engine)
    now = time.time()
    insert = sql(
        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, user_id,"
        " text, kind, created_at, deleted) VALUES (:channel, :ts, 'T1', '', '', 'judgment',"
        " 'U1', 'hi', 'conversational', 0, false)"
    )
    lively = [{"channel": "CLIVELY", "ts": f"{now - 60 + n:.6f}"} for n in range(30)]
    quiet = [{"channel": "CQUIET", "ts": f"{now - 60 + n:.6f}"} for n in range(10)]
    rerouted = with_pace(None, window=600, min_wait=300, floor=60, recount=2.0)
    assert rerouted is not None and most_counted(min_wait=300, floor=60) == 26
    counted: list[set[object]] = []

    def count(
        _conn: object, _cursor: object, statement: str, parameters: object, *_: object
    ) -> None:
        if "AS pace" in statement:
            values = parameters.values() if isinstance(parameters, dict) else parameters
            counted.append({v for v in values if str(v).startswith("C")})  # type: ignore[union-attr]

    event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        async with engine.begin() as connection:
            await connection.execute(insert, lively + quiet)

        async def batch(at: float) -> dict[str, int]:
            messages = [message(f"{at:.6f}", channel=c) for c in ("CLIVELY", "CQUIET")]
            async with engine.connect() as connection:
                routes = await connection.run_sync(lambda c: rerouted(c, messages, at))
            return {key[0]: route.pace for key, route in routes.items()}

        first = await batch(now)
        second = await batch(now + 1.0)
        third = await batch(now + 2.5)
    finally:
        await engine.dispose()
    assert first == second == third == {"CLIVELY": 26, "CQUIET": 10}
    assert counted == [{"CLIVELY", "CQUIET"}, {"CQUIET"}, {"CLIVELY", "CQUIET"}]


async def test_the_paces_of_many_channels_are_counted_in_one_go(database_url: str) -> None:
    """More channels than one statement counts, each with its own people's messages: bots',
    deleted, system and older messages left out, each count stopped at `most`."""
    engine = create_engine(database_url)
    await upgrade_to_head(engine)
    now, since = time.time(), time.time() - 600
    expected: dict[str, int] = {}
    rows = []
    for number in range(CHANNELS_PER_STATEMENT + 30):
        channel, people = f"C{number:04d}", number % 9
        expected[channel] = min(people, 7)
        for k in range(people):  # people's messages within the window
            rows.append((channel, f"{int(now) - 10}.{k:06d}", "U1", None, "conversational", False))
        rows += [  # none of these count
            (channel, f"{int(now) - 20}.000001", None, "B1", "conversational", False),
            (channel, f"{int(now) - 20}.000002", "U1", None, "conversational", True),
            (channel, f"{int(now) - 20}.000003", "U1", None, "system", False),
            (channel, f"{int(since) - 60}.000004", "U1", None, "conversational", False),
        ]
    statement = sql(
        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, user_id,"
        " bot_id, text, kind, created_at, deleted) VALUES (:channel, :ts, 'T1', '', '',"
        " 'record', :user, :bot, 'hi', :kind, 0, :deleted)"
    )
    try:
        async with engine.begin() as connection:
            keys = ("channel", "ts", "user", "bot", "kind", "deleted")
            await connection.execute(statement, [dict(zip(keys, row, strict=True)) for row in rows])
        async with engine.connect() as connection:
            counted = await connection.run_sync(
                lambda sync: channel_paces(sync, [*expected, "CNONE"], since, most=7)
            )
    finally:
        await engine.dispose()
    assert counted == {**expected, "CNONE": 0}
