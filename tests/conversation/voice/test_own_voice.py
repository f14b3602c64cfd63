"""Own-voice limits end to end (docs/how-tomo-works.md: #judgment, #tomo): the channel's mode, the
cooldown after an autonomous reply and the daily cap stop tomo joining conversations on its own
before any LLM call (0 tokens: the model stand-in receives no request), with the limit stored as the
decision's reason; mentions and DMs are never limited."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.conversation.claims import taking
from app.conversation.voice.own_voice import OwnVoice
from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.domain import ReplyReason
from app.settings import SettingsError, load_settings
from tests.conftest import (
    TEST_DATABASE_URL,
    StartTomo,
    Tomo,
    judgment_json,
    later_ts,
    purpose_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command


def respond_always(model: FakeModel, *, delay: float = 0) -> None:
    """Every judgment says respond; every reply says hello."""
    model.responder = lambda request: (
        judgment_json(True, delay=delay, reason="a question nobody answered")
        if purpose_of(request) == "judgment"
        else "hello!"
    )


def purposes(model: FakeModel) -> list[str]:
    return [purpose_of(request) for request in model.requests]


async def decisions(tomo: Tomo) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM judgment ORDER BY decided_at, id")


async def decision_for(tomo: Tomo, ts: str) -> dict[str, Any]:
    async def found() -> bool:
        return any(d["latest_ts"] == ts for d in await decisions(tomo))

    await wait_for(found, what=f"the decision on {ts}")
    (decision,) = [d for d in await decisions(tomo) if d["latest_ts"] == ts]
    return decision


def assert_limited(decision: dict[str, Any], reason: str) -> None:
    assert decision["should_respond"] is False or decision["should_respond"] == 0
    assert decision["reason"].startswith("own-voice limit: ") and reason in decision["reason"]
    assert decision["prompt_tokens"] == 0 and decision["completion_tokens"] == 0
    assert decision["model"] == ""


async def test_a_quiet_channel_costs_no_tokens_but_mentions_and_dms_are_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    respond_always(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await run_command(tomo, "quiet", response_url=hooks.new_url())
        ts = await tomo.message("does anyone know a good ramen place?")
        decision = await decision_for(tomo, ts)
        await asyncio.sleep(0.3)
        assert model.requests == [] and slack.posts() == []
        await tomo.message("<@UBOT> do you?", user="U2")
        await tomo.message("hi tomo", channel="D1", channel_type="im")
        posts = await slack.wait_for_posts(2)
    assert_limited(decision, "the channel is quiet until changed")
    assert purposes(model) == ["reply", "reply"]
    assert sorted(p["channel"] for p in posts) == ["C1", "D1"]


async def test_mentions_only_holds_back_in_that_channel_alone(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    respond_always(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await run_command(tomo, "mentions-only", response_url=hooks.new_url())
        held = await tomo.message("what's for lunch?")
        decision = await decision_for(tomo, held)
        assert model.requests == []
        await tomo.message("what's for lunch over here?", channel="C2")
        (post,) = await slack.wait_for_posts(1)
    assert_limited(decision, "the channel is mentions-only")
    assert post["channel"] == "C2" and purposes(model) == ["judgment", "reply"]


async def test_a_quiet_time_that_ends_lets_the_next_message_be_judged(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    respond_always(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:
        # Long enough to outlast the first message's judgment on a busy machine (0.6 s did not).
        await run_command(tomo, "quiet 3s", response_url=hooks.new_url())
        during = await tomo.message("anyone around?")
        held = await decision_for(tomo, during)
        assert model.requests == []
        await asyncio.sleep(3.1)
        after = await tomo.message("anyone around now?")
        (post,) = await slack.wait_for_posts(1)
        judged = await decision_for(tomo, after)
    assert_limited(held, "the channel is quiet until ")
    assert judged["should_respond"] and judged["reason"] == "a question nobody answered"
    assert judged["prompt_tokens"] > 0 and purposes(model) == ["judgment", "reply"]
    assert post["channel"] == "C1"


async def test_after_joining_on_its_own_tomo_cools_down_in_that_channel(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    respond_always(model)
    # Without follow-ups: a message after tomo's own at the top level is the channel's talk
    # (tests/conversation/timing/test_follow_ups.py shows a follow-up is never cooled down).
    settings = {"FOLLOW_UP_WINDOW_SECONDS": 0}
    async with start_tomo(
        MIN_WAIT_SECONDS=0.05, AUTONOMOUS_COOLDOWN_SECONDS=1.0, **settings
    ) as tomo:
        await tomo.message("is the coffee machine fixed?")
        await slack.wait_for_posts(1)
        second = await tomo.message("also, where are the mugs?", user="U2", ts=later_ts())
        held = await decision_for(tomo, second)
        assert purposes(model) == ["judgment", "reply"]
        await tomo.message("<@UBOT> where are the mugs?", user="U2", ts=later_ts())  # answered
        await slack.wait_for_posts(2)
        await asyncio.sleep(1.0)  # the cooldown passes
        third = await tomo.message("and the sugar?", ts=later_ts())
        await slack.wait_for_posts(3)
        judged = await decision_for(tomo, third)
    assert_limited(held, "tomo joined this channel on its own")
    assert "AUTONOMOUS_COOLDOWN_SECONDS=1" in held["reason"]
    assert judged["should_respond"] and judged["prompt_tokens"] > 0
    assert purposes(model) == ["judgment", "reply", "reply", "judgment", "reply"]


async def test_the_daily_cap_counts_autonomous_replies_per_channel(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    respond_always(model)
    async with start_tomo(
        MIN_WAIT_SECONDS=0.05,
        AUTONOMOUS_COOLDOWN_SECONDS=0,
        MAX_AUTONOMOUS_REPLIES_PER_DAY=2,
        FOLLOW_UP_WINDOW_SECONDS=0,  # each question is the channel's talk, not a follow-up
    ) as tomo:
        for text in ("first question?", "second question?"):
            await tomo.message(text, ts=later_ts())
            await slack.wait_for_posts(len(slack.posts()) + 1)
        third = await tomo.message("third question?", ts=later_ts())
        held = await decision_for(tomo, third)
        await tomo.message("a question elsewhere?", channel="C2")
        await slack.wait_for_posts(3)
        await asyncio.sleep(0.2)
    assert_limited(held, "2 autonomous replies in this channel in the last 24 h")
    assert "MAX_AUTONOMOUS_REPLIES_PER_DAY=2" in held["reason"]
    assert purposes(model) == ["judgment", "reply"] * 3
    assert [p["channel"] for p in slack.posts()] == ["C1", "C1", "C2"]


async def test_a_cap_of_zero_means_never_on_its_own(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    respond_always(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.05, MAX_AUTONOMOUS_REPLIES_PER_DAY=0) as tomo:
        ts = await tomo.message("anyone?")
        held = await decision_for(tomo, ts)
        await tomo.message("<@UBOT> anyone?")
        await slack.wait_for_posts(1)
    assert_limited(held, "MAX_AUTONOMOUS_REPLIES_PER_DAY is 0")
    assert purposes(model) == ["reply"]


async def test_a_reply_timer_set_before_quiet_does_not_post_nor_come_back_after_a_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    # The reply is due 3 s after the judgment: time, however busy the machine, to go quiet.
    respond_always(model, delay=3.0)
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:
        ts = await tomo.message("who knows a good dentist?")
        await wait_for(
            lambda: tomo.timers("reply"),
            what="the reply timer",
        )
        await run_command(tomo, "quiet 4s", response_url=hooks.new_url())
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'withheld'"),
            what="the reply job to withhold its reply",
        )
        (reply,) = await tomo.rows("SELECT * FROM reply")
    assert slack.posts() == [] and purposes(model) == ["judgment"]
    assert reply["trigger_ts"] == ts and reply["status"] == "withheld"
    assert reply["error"].startswith("own-voice limit: the channel is quiet until")
    await asyncio.sleep(4.0)  # the quiet time is over; the reply is not owed any more
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:
        await asyncio.sleep(0.5)
        jobs = [t.id for t in (await tomo.runtime.timers.list()) if t.kind in ("judgment", "reply")]
    assert jobs == [] and slack.posts() == [] and purposes(model) == ["judgment"]


async def test_the_mode_survives_a_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    respond_always(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:
        await run_command(tomo, "quiet 1h", response_url=hooks.new_url())
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:
        ts = await tomo.message("still quiet?")
        held = await decision_for(tomo, ts)
        status = await run_command(tomo, "status", response_url=hooks.new_url())
    assert_limited(held, "the channel is quiet until ")
    assert model.requests == [] and slack.posts() == []
    assert "• Mode: *quiet* until <!date^" in status["text"]


async def test_auto_reply_channels_answer_only_mentions_while_held_back(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    respond_always(model)
    async with start_tomo(AUTO_REPLY_CHANNELS="C1") as tomo:
        await run_command(tomo, "mentions-only", response_url=hooks.new_url())
        plain = await tomo.message("good morning")
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'withheld'"),
            what="the withheld reply",
        )
        await tomo.message("<@UBOT> good morning")
        (post,) = await slack.wait_for_posts(1)
        await run_command(tomo, "normal", response_url=hooks.new_url())
        await tomo.message("good morning again")
        await slack.wait_for_posts(2)
        (withheld,) = await tomo.rows("SELECT * FROM reply WHERE status = 'withheld'")
    assert withheld["trigger_ts"] == plain and withheld["reason"] == "auto_reply"
    assert withheld["error"] == "own-voice limit: the channel is mentions-only"
    assert purposes(model) == ["reply", "reply"] and post["thread_ts"] is not None


async def test_an_auto_reply_cut_short_then_held_back_is_withheld_once_not_owed_each_start(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    """Its claim was interrupted before anything was composed; the channel went mentions-only
    meanwhile: the next start withholds it, and the one after owes nothing."""
    respond_always(model)
    model.delay(2.0)
    async with start_tomo(AUTO_REPLY_CHANNELS="C1") as tomo:
        ts = await tomo.message("good morning")
        await model.wait_for_requests(1)
        running = tomo.memory_timers.running_jobs
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        await run_command(tomo, "mentions-only", response_url=hooks.new_url())
        (cut,) = await tomo.rows("SELECT status, chunks FROM reply")
    assert cut == {"status": "interrupted", "chunks": None}
    model.delay(0)
    async with start_tomo(AUTO_REPLY_CHANNELS="C1") as tomo:
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'withheld'"),
            what="the reply withheld",
        )
        (row,) = await tomo.rows("SELECT * FROM reply")
    assert (
        row["trigger_ts"] == ts and row["error"] == "own-voice limit: the channel is mentions-only"
    )
    async with start_tomo(AUTO_REPLY_CHANNELS="C1") as tomo:
        await asyncio.sleep(0.3)
        assert await tomo.timers("reply") == []
    assert slack.posts() == []


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="several instances share PostgreSQL")
async def test_two_instances_never_both_pass_the_cooldown_of_one_channel(database_url: str) -> None:
    """Six autonomous replies for six conversations of one channel, at once, from two
    instances (two engines, two OwnVoice): the turn is the fleet's, so only one claims; the
    others see its claim and are withheld."""
    engines = [create_engine(database_url, connections=4) for _ in range(2)]
    await upgrade_to_head(engines[0])
    voices = [OwnVoice(engine=engine, cooldown=600, daily_cap=5) for engine in engines]

    async def attempt(n: int) -> bool:
        voice, engine = voices[n % 2], engines[n % 2]
        async with voice.turn(
            channel="C1",
            thread_ts=f"17000000{n}0.000100",
            trigger_ts=f"17000000{n}1.000100",
            reason=ReplyReason.JUDGMENT,
        ) as turn:
            if not turn.allowed:
                return False
            await asyncio.sleep(0.05)  # between the check and the claim: the race's window
            claim = await taking.claim(
                engine,
                channel="C1",
                thread_ts=f"17000000{n}0.000100",
                trigger_ts=f"17000000{n}1.000100",
                reason=ReplyReason.JUDGMENT,
                connection=turn.connection,
            )
            return claim is not None

    try:
        claimed = await asyncio.gather(*(attempt(n) for n in range(6)))
        async with engines[0].connect() as connection:
            statuses = sorted(
                row[0] for row in await connection.exec_driver_sql("SELECT status FROM reply")
            )
    finally:
        for engine in engines:
            await engine.dispose()
    assert sum(claimed) == 1
    assert statuses == ["claimed"] + ["withheld"] * 5


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AUTONOMOUS_COOLDOWN_SECONDS", "-1"),
        ("AUTONOMOUS_COOLDOWN_SECONDS", "soon"),
        ("MAX_AUTONOMOUS_REPLIES_PER_DAY", "-1"),
        ("MAX_AUTONOMOUS_REPLIES_PER_DAY", "1.5"),
    ],
)
def test_invalid_limits_stop_start_up_naming_the_setting(name: str, value: str) -> None:
    required = {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-t"}
    with pytest.raises(SettingsError, match=name):
        load_settings(_env_file=None, **required, **{name: value})


def test_the_limits_default_to_the_spec() -> None:
    settings = load_settings(_env_file=None, SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN="xoxb-t")
    assert settings.AUTONOMOUS_COOLDOWN_SECONDS == 900.0
    assert settings.MAX_AUTONOMOUS_REPLIES_PER_DAY == 12
