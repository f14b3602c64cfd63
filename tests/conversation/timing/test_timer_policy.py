"""Routing end to end (docs/how-tomo-works.md#routing): signed events in, chat.postMessage and model
calls out."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.conftest import StartTomo, judgment_json, purpose_of, turns_of, wait_for
from tests.fakes import FakeModel, FakeSlack


def answer_by_purpose(
    model: FakeModel, *, judgment: str = judgment_json(False), reply: str = "hi there"
) -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment if purpose_of(request) == "judgment" else reply

    model.responder = responder


def purposes(model: FakeModel) -> list[str]:
    return [purpose_of(request) for request in model.requests]


async def test_top_level_mention_is_answered_at_once_in_its_own_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="hello Alice")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        ts = await tomo.message("<@UBOT> are you there?")
        posts = await slack.wait_for_posts(1)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted'"),
            what="the finished reply",
        )
        stored = await tomo.rows("SELECT * FROM message WHERE user_id = 'UBOT'")
        jobs = await tomo.runtime.timers.list()
    assert posts == [
        {"channel": "C1", "text": "hello Alice", "thread_ts": ts, "ts": posts[0]["ts"]}
    ]
    assert purposes(model) == ["reply"]  # no judgment for a mention
    assert [(r["ts"], r["bot_id"], r["thread_ts"]) for r in stored] == [
        (posts[0]["ts"], "BBOT", ts)
    ]
    assert not [job for job in jobs if job.kind in ("judgment", "reply")]


async def test_app_mention_event_and_its_message_copy_answer_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        ts = await tomo.message("<@UBOT> once please", kind="app_mention")
        await tomo.message("<@UBOT> once please", ts=ts)
        await slack.wait_for_posts(1)
        await asyncio.sleep(0.5)
    assert len(slack.posts()) == 1
    assert purposes(model) == ["reply"]


async def test_mention_inside_a_thread_is_answered_in_that_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        parent = await tomo.message("lunch plans?", user="U2")
        await tomo.message("<@UBOT> what do you think?", thread_ts=parent)
        posts = await slack.wait_for_posts(1)
        jobs = {job.id for job in (await tomo.runtime.timers.list())}
    assert posts[0]["thread_ts"] == parent
    # The parent's top-level judgment went: its conversation moved into the thread.
    assert "judgment:C1:" not in jobs
    assert purposes(model) == ["reply"]


async def test_two_top_level_mentions_never_merge(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo() as tomo:
        first = await tomo.message("<@UBOT> first question")
        second = await tomo.message("<@UBOT> second question", user="U2")
        posts = await slack.wait_for_posts(2)
        await asyncio.sleep(0.3)
    assert sorted(p["thread_ts"] for p in slack.posts()) == sorted([first, second])
    assert len(posts) == 2
    # Each reply saw only its own mention.
    last_turns = sorted(turns_of(r)[-1]["content"] for r in model.requests)
    assert last_turns[0].startswith("<@U1>") and last_turns[0].endswith("first question")
    assert last_turns[1].startswith("<@U2>") and last_turns[1].endswith("second question")
    assert all(len(turns_of(r)) == 1 for r in model.requests)


async def test_direct_message_is_answered_where_it_was_written(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    answer_by_purpose(model, reply="hey!")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("hi tomo", channel="D1", channel_type="im")
        posts = await slack.wait_for_posts(1)
    assert posts[0]["channel"] == "D1" and posts[0]["thread_ts"] is None
    assert purposes(model) == ["reply"]


async def test_auto_reply_channel_is_answered_like_a_mention(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo(MIN_WAIT_SECONDS=30, AUTO_REPLY_CHANNELS="C2") as tomo:
        ts = await tomo.message("anyone around?", channel="C2")
        posts = await slack.wait_for_posts(1)
        await tomo.message("just chatting", channel="C1")
        jobs = {job.id for job in (await tomo.runtime.timers.list())}
    assert posts[0]["channel"] == "C2" and posts[0]["thread_ts"] == ts
    assert purposes(model) == ["reply"]
    assert "judgment:C1:" in jobs  # an ordinary channel still waits for a judgment


async def test_bot_messages_are_recorded_and_trigger_nothing(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True))
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("deploy done <@UBOT>", user=None, bot_id="B9", subtype="bot_message")
        await tomo.message("from an app user <@UBOT>", user="U7", bot_id="B7")
        await tomo.message("<@UBOT> talking to myself", user="UBOT", bot_id="BBOT")
        await tomo.message(
            "a DM from a bot", user=None, bot_id="B9", channel="D1", channel_type="im"
        )
        jobs = [
            job for job in (await tomo.runtime.timers.list()) if job.kind in ("judgment", "reply")
        ]
        await asyncio.sleep(0.4)
        rows = await tomo.rows("SELECT route FROM message")
    assert jobs == []
    assert [r["route"] for r in rows] == ["record"] * 4
    assert model.requests == [] and slack.posts() == []


async def test_a_burst_of_messages_costs_one_judgment_after_the_quiet_period(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="count me in")
    # A quiet time that outlasts the burst however busy the machine (at 0.4 s, it did not).
    async with start_tomo(MIN_WAIT_SECONDS=3, JITTER_RATIO=0) as tomo:
        sent = []
        for i in range(5):
            sent.append(await tomo.message(f"message {i}", user="U1" if i % 2 else "U2"))
            await asyncio.sleep(0.1)
        assert model.requests == []  # still inside the quiet period
        posts = await slack.wait_for_posts(1)
        await asyncio.sleep(0.3)
        decisions = await tomo.rows("SELECT latest_ts, should_respond FROM judgment")
    assert purposes(model) == ["judgment", "reply"]
    assert decisions == [{"latest_ts": sent[-1], "should_respond": True}]
    assert len(slack.posts()) == 1 and posts[0]["thread_ts"] is None
    judged = model.requests[0]["messages"]
    assert len(judged) == 1 and judged[0]["role"] == "system"
    assert all(f"message {i}" in judged[0]["content"] for i in range(5))


async def test_a_thread_reply_under_the_newest_top_level_message_cancels_its_judgment(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answer_by_purpose(model)
    # The judgments must still be pending when the timers are listed, on a busy machine too.
    async with start_tomo(MIN_WAIT_SECONDS=3) as tomo:
        older = await tomo.message("older top-level message")
        newest = await tomo.message("what about friday?")
        assert {job.id for job in (await tomo.runtime.timers.list())} >= {"judgment:C1:"}
        await tomo.message("under the older one", thread_ts=older, user="U2")
        assert "judgment:C1:" in {job.id for job in (await tomo.runtime.timers.list())}
        await tomo.message("friday works", thread_ts=newest, user="U2")
        ids = {job.id for job in (await tomo.runtime.timers.list())}
        assert "judgment:C1:" not in ids
        assert {f"judgment:C1:{older}", f"judgment:C1:{newest}"} <= ids
        await wait_for(lambda: len(model.requests) == 2, what="two thread judgments")

        async def both_stored() -> bool:  # asked first, stored once answered
            return len(await tomo.rows("SELECT 1 FROM judgment")) >= 2

        await wait_for(both_stored, what="both judgments stored")
        await asyncio.sleep(0.3)  # nothing more comes
        judged = await tomo.rows("SELECT thread_ts FROM judgment ORDER BY thread_ts")
    assert [r["thread_ts"] for r in judged] == sorted([older, newest])


async def test_a_new_message_while_judging_is_judged_afresh(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="ok!")
    model.delay(0.5)  # the first judgment is slow
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("first thought")
        await model.wait_for_requests(1)
        second = await tomo.message("second thought")
        await slack.wait_for_posts(1)
        await asyncio.sleep(0.3)
        decisions = await tomo.rows("SELECT latest_ts FROM judgment ORDER BY decided_at")
    # The first decision saw the older message; its reply would be stale, so it is not posted
    # and the second message gets its own judgment and the one reply.
    assert decisions[-1]["latest_ts"] == second
    assert len(slack.posts()) == 1
    assert purposes(model).count("reply") == 1


async def test_a_direct_message_conversation_carries_tomos_earlier_answer(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    answer_by_purpose(model, reply="I'm fine, thanks!")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("how are you?", channel="D1", channel_type="im")
        await slack.wait_for_posts(1)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted'"),
            what="the first reply",
        )
        # Slack's ts grows with time: the next message is later than tomo's answer.
        await tomo.message("great!", channel="D1", channel_type="im", ts=f"{time.time():.6f}")
        posts = await slack.wait_for_posts(2)
    assert [p["thread_ts"] for p in posts] == [None, None]
    turns = turns_of(model.last_request)
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[1]["content"] == "I'm fine, thanks!" and turns[2]["content"].endswith("great!")


async def test_an_autonomous_reply_in_a_thread_is_posted_in_that_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="good luck!")
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        async with tomo.timers_held():  # the thread reply comes before the parent's judgment
            parent = await tomo.message("exam tomorrow", user="U2")
            await tomo.message("I'm so nervous", thread_ts=parent, user="U2")
        (post,) = await slack.wait_for_posts(1)
        decisions = await tomo.rows("SELECT thread_ts FROM judgment")
    assert post["thread_ts"] == parent
    assert decisions == [{"thread_ts": parent}]
    assert purposes(model) == ["judgment", "reply"]


async def test_a_message_deleted_before_its_judgment_costs_nothing(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True))
    async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:
        ts = await tomo.message("oops, wrong channel")
        deleted = {
            "type": "message",
            "subtype": "message_deleted",
            "channel": "C1",
            "deleted_ts": ts,
            "ts": f"{time.time():.6f}",
        }
        assert (await tomo.event(deleted)).status_code == 200
        await asyncio.sleep(0.6)
    assert model.requests == [] and slack.posts() == []


async def test_an_edit_before_the_judgment_is_what_is_judged(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:
        ts = await tomo.message("meet at 5?")
        edit = {
            "type": "message",
            "subtype": "message_changed",
            "channel": "C1",
            "message": {"type": "message", "user": "U1", "text": "meet at 6?", "ts": ts},
            "ts": f"{time.time():.6f}",
        }
        assert (await tomo.event(edit)).status_code == 200
        await model.wait_for_requests(1)
    prompt = model.requests[0]["messages"][0]["content"]
    assert "meet at 6?" in prompt and "meet at 5?" not in prompt
