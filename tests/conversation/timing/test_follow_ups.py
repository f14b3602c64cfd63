"""Follow-ups end to end (docs/how-tomo-works.md#follow-ups): in a conversation tomo takes part
in, a person's message without a mention is judged within seconds, as one of tomo's own
conversation, and answered like a person's request. Events are the real shapes of
tests/fixtures/slack (app_mention, message_plain, message_thread_reply, message_mpim) with our
ids, texts and times, sent signed to the endpoint; Slack and the model are the stand-ins."""

from __future__ import annotations

import asyncio
import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    ADMIN_TOKEN,
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

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slack"
BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SLOW = 120.0  # MIN_WAIT_SECONDS in these tests: a normal judgment never comes while they run
BACKENDS = [
    "apscheduler",
    pytest.param(
        "procrastinate",
        marks=pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's"),
    ),
]


def shaped(
    fixture: str,
    text: str,
    *,
    user: str = "U1",
    channel: str = "C1",
    thread_ts: str | None = None,
    ts: str | None = None,
) -> dict[str, Any]:
    """The event of a real payload of tests/fixtures/slack with our text, author, place and a
    fresh ts (its rich_text block says the same text)."""
    payload = json.loads((FIXTURES / f"{fixture}.json").read_text())
    event: dict[str, Any] = copy.deepcopy(payload["event"])
    stamp = ts or later_ts()
    event.update(text=text, user=user, channel=channel, ts=stamp, event_ts=stamp)
    event.pop("client_msg_id", None)
    for block in event.get("blocks", []):
        for section in block.get("elements", []):
            section["elements"] = [{"type": "text", "text": text}]
    if thread_ts:
        event["thread_ts"] = thread_ts
        event.setdefault("parent_user_id", "U1")
    else:
        event.pop("thread_ts", None)
        event.pop("parent_user_id", None)
    return event


async def say(tomo: Tomo, fixture: str, text: str, **where: Any) -> str:
    event = shaped(fixture, text, **where)
    response = await tomo.event(event)
    assert response.status_code == 200, response.text
    return str(event["ts"])


def answering(model: FakeModel, *, judgment: bool = True, reply: str = "sure!") -> None:
    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) == "judgment":
            return judgment_json(judgment, delay=300)  # a follow-up's delay is ignored
        return reply

    model.responder = responder


def purposes(model: FakeModel) -> list[str]:
    asked = (purpose_of(request) for request in model.requests)
    return [purpose for purpose in asked if purpose in ("judgment", "reply")]


def judgment_prompts(model: FakeModel) -> list[str]:
    return [
        str(r["messages"][0]["content"]) if isinstance(r["messages"][0]["content"], str)
        else "".join(part.get("text", "") for part in r["messages"][0]["content"])
        for r in model.requests
        if purpose_of(r) == "judgment"
    ]  # fmt: skip


async def posted(tomo: Tomo, slack: FakeSlack, count: int) -> None:
    """Until tomo has posted `count` messages and stored them (what tells a follow-up)."""
    await slack.wait_for_posts(count, timeout=20)
    sql = "SELECT ts FROM message WHERE user_id = 'UBOT'"

    async def stored() -> bool:
        return len(await tomo.rows(sql)) >= count

    await wait_for(stored, timeout=15, what=f"tomo's {count} posts stored")


async def mentioned_and_answered(tomo: Tomo, slack: FakeSlack, text: str) -> str:
    """A top-level mention, answered in its own thread; returns the thread."""
    thread = await say(tomo, "app_mention", f"<@UBOT> {text}")
    await posted(tomo, slack, len(slack.posts()) + 1)
    return thread


async def decided(tomo: Tomo, latest_ts: str, *, timeout: float = 15) -> dict[str, Any]:
    sql = "SELECT * FROM judgment WHERE latest_ts = :ts"
    await wait_for(lambda: tomo.rows(sql, ts=latest_ts), timeout=timeout, what="the decision")
    (row,) = await tomo.rows(sql, ts=latest_ts)
    return row


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_follow_up_after_a_mention_is_judged_at_once_and_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, backend: str
) -> None:
    answering(model, reply="for six: the ramen place on 3rd has a big table")
    settings = {"JOB_BACKEND": backend, "MIN_WAIT_SECONDS": SLOW, "FOLLOW_UP_WAIT_SECONDS": 0.3}
    async with start_tomo(**settings) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "where should we eat tonight?")
        follow_up = await say(tomo, "message_thread_reply", "and for six people?", thread_ts=thread)
        (timer,) = await tomo.timers("judgment")
        await slack.wait_for_posts(2, timeout=20)
        decision = await decided(tomo, follow_up)
        claims = await tomo.rows("SELECT reason, trigger_ts FROM reply ORDER BY id")
        routes = await tomo.rows("SELECT route FROM message WHERE ts = :ts", ts=follow_up)
    # The judgment's timer is the conversation's, set FOLLOW_UP_WAIT_SECONDS ahead.
    assert (timer.id, timer.reason) == (f"judgment:C1:{thread}", "follow_up")
    assert timer.seconds_left is not None and timer.seconds_left <= 0.3
    assert routes == [{"route": "follow_up"}]
    assert purposes(model) == ["reply", "judgment", "reply"]
    assert slack.posts()[1]["thread_ts"] == thread
    assert slack.posts()[1]["text"].startswith("for six")
    assert decision["follow_up"] and decision["should_respond"]
    assert claims == [
        {"reason": "mention", "trigger_ts": thread},
        {"reason": "follow_up", "trigger_ts": follow_up},
    ]
    # The judgment knew tomo is in the conversation, its own message marked as its own.
    (prompt,) = judgment_prompts(model)
    assert "## You are part of this conversation" in prompt
    assert "tomo (you):" in prompt


async def test_a_follow_up_shows_on_it_like_a_mention(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.1) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "what's the wifi password?")
        await say(tomo, "message_thread_reply", "and the guest one?", thread_ts=thread)
        await posted(tomo, slack, 2)
        # The mention's status set and cleared, then the follow-up's.
        await wait_for(
            lambda: len(slack.calls_to("assistant.threads.setStatus")) >= 4,
            timeout=10,
            what="both replies' status set and cleared",
        )
        statuses = slack.calls_to("assistant.threads.setStatus")
    assert {call["thread_ts"] for call in statuses} == {thread}
    assert sorted(bool(call["status"]) for call in statuses) == [False, False, True, True]
    assert statuses[-1]["status"] == ""


async def test_a_burst_of_follow_ups_costs_one_judgment(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=1.0) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "can you plan friday's offsite?")
        stamps = [
            await say(tomo, "message_thread_reply", line, thread_ts=thread)
            for line in ("ok so", "we are 12", "one is vegan", "budget is tight")
        ]
        await slack.wait_for_posts(2, timeout=20)
        await asyncio.sleep(0.5)
        decisions = await tomo.rows("SELECT latest_ts, follow_up FROM judgment")
    assert purposes(model) == ["reply", "judgment", "reply"]
    assert decisions == [{"latest_ts": stamps[-1], "follow_up": True}]


async def test_thanks_gets_no_message(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model, judgment=False)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.2) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "when is the deploy freeze?")
        thanks = await say(tomo, "message_thread_reply", "thanks!", thread_ts=thread)
        decision = await decided(tomo, thanks)
        await asyncio.sleep(0.5)
    assert decision["follow_up"] and not decision["should_respond"]
    assert len(slack.posts()) == 1
    assert slack.reactions("C1", thanks) == []  # the model named no reaction
    assert purposes(model) == ["reply", "judgment"]
    (prompt,) = judgment_prompts(model)
    assert '("thanks!", "got it"' in prompt  # the closing criterion was asked
    assert '"reaction"' in prompt  # and a reaction offered instead of a message


@pytest.mark.parametrize(
    ("named", "reacted"),
    [(":pray:", ["pray"]), ("+1", ["+1"]), ("<!channel> hi", []), ("x" * 65, []), (7, [])],
)
async def test_thanks_may_get_the_reaction_the_judgment_names_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, named: object, reacted: list[str]
) -> None:
    """A closing follow-up acknowledged with a reaction, never a message; a name that is not
    an emoji's is no reaction, and the decision stands. The decision shows the reaction on
    the admin page and in /admin/decisions."""

    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) == "judgment":
            return json.dumps({"should_respond": False, "reason": "closing", "reaction": named})
        return "sure!"

    model.responder = responder
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.2) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "when is the deploy freeze?")
        thanks = later_ts()  # in Slack before its event comes: what a reaction is added to
        slack.add_message("C1", ts=thanks, text="thanks!", user="U1", thread_ts=thread)
        await say(tomo, "message_thread_reply", "thanks!", thread_ts=thread, ts=thanks)
        decision = await decided(tomo, thanks)
        if reacted:
            await wait_for(lambda: slack.reactions("C1", thanks), what="the reaction")
            sql = "SELECT id FROM judgment WHERE latest_ts = :ts AND reaction IS NOT NULL"
            await wait_for(lambda: tomo.rows(sql, ts=thanks), what="the reaction written down")
        await asyncio.sleep(0.5)
        shown = (await tomo.client.get("/admin/decisions", headers=BEARER)).json()
        page = (await tomo.client.get("/admin", auth=("admin", ADMIN_TOKEN))).text
    assert decision["valid"] and not decision["should_respond"]
    assert len(slack.posts()) == 1
    assert slack.reactions("C1", thanks) == reacted
    assert slack.reactions("C1", thread) == []  # the mention itself is not reacted to
    (listed,) = [d for d in shown["decisions"] if d["latest_ts"] == thanks]
    assert listed["reaction"] == (reacted[0] if reacted else None)
    assert ("reacted :" in page) == bool(reacted)
    assert all(f"reacted :{name}:" in page for name in reacted)


async def test_two_people_talking_in_tomos_thread_are_judged_fast_and_left_alone(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model, judgment=False)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.2) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "who owns the billing service?")
        await say(
            tomo, "message_thread_reply", "Bob, did you see this?", user="U2", thread_ts=thread
        )
        last = await say(
            tomo, "message_thread_reply", "yes, I'll take it offline", user="U3", thread_ts=thread
        )
        decision = await decided(tomo, last)
        await asyncio.sleep(0.5)
    assert decision["follow_up"] and not decision["should_respond"]
    assert len(slack.posts()) == 1 and purposes(model) == ["reply", "judgment"]


async def test_outside_the_window_a_message_waits_the_normal_quiet_time(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model)
    settings = {"MIN_WAIT_SECONDS": SLOW, "FOLLOW_UP_WINDOW_SECONDS": 0.5}
    async with start_tomo(**settings) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "is the VPN down?")
        await asyncio.sleep(0.6)  # the window closes
        later = await say(tomo, "message_thread_reply", "works again now", thread_ts=thread)
        (timer,) = await tomo.timers("judgment")
        routes = await tomo.rows("SELECT route FROM message WHERE ts = :ts", ts=later)
    assert timer.reason is None
    assert timer.seconds_left is not None and timer.seconds_left > SLOW / 2
    assert routes == [{"route": "judgment"}]
    assert purposes(model) == ["reply"]


async def test_with_the_window_off_nothing_is_a_follow_up(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WINDOW_SECONDS=0) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "is the VPN down?")
        await say(tomo, "message_thread_reply", "still?", thread_ts=thread)
        (timer,) = await tomo.timers("judgment")
    assert timer.reason is None and (timer.seconds_left or 0) > SLOW / 2


async def test_bots_never_make_a_follow_up(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.1) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "ping the build bot")
        bot = shaped("message_thread_reply", "build #41 passed", thread_ts=thread)
        del bot["user"]
        bot.update(subtype="bot_message", bot_id="B9", username="ci")
        assert (await tomo.event(bot)).status_code == 200
        await asyncio.sleep(0.5)
        timers = await tomo.timers("judgment", "reply")
        routes = await tomo.rows("SELECT route FROM message WHERE ts = :ts", ts=bot["ts"])
    assert timers == [] and routes == [{"route": "record"}]
    assert purposes(model) == ["reply"]


async def test_in_a_quiet_channel_follow_ups_are_answered_only_where_a_person_asked(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.2, FOLLOW_UP_WAIT_SECONDS=0.2) as tomo:
        # tomo joins a thread on its own (a judgment), and is asked in another (a mention).
        async with tomo.timers_held():  # the reply must come within the parent's quiet wait
            parent = await say(
                tomo, "message_plain", "does anyone know the deploy steps?", user="U2"
            )
            joined = await say(
                tomo, "message_thread_reply", "I forgot them", user="U2", thread_ts=parent
            )
        await posted(tomo, slack, 1)
        asked = await mentioned_and_answered(tomo, slack, "what time is standup?")
        await run_command(tomo, "quiet", response_url=hooks.new_url())
        before = len(model.requests)
        ignored = await say(
            tomo, "message_thread_reply", "so step one?", user="U2", thread_ts=parent
        )
        answered = await say(tomo, "message_thread_reply", "and on fridays?", thread_ts=asked)
        held = await decided(tomo, ignored)
        await slack.wait_for_posts(3, timeout=20)
        await asyncio.sleep(0.3)
        followed = await decided(tomo, answered)
        status = await run_command(tomo, "status", response_url=hooks.new_url())
        page = (await tomo.client.get("/admin/decisions", headers=BEARER)).json()
    assert slack.posts()[0]["thread_ts"] == parent and joined
    assert held["follow_up"] and not held["should_respond"] and held["prompt_tokens"] == 0
    assert "quiet" in held["reason"] and "on its own" in held["reason"]
    assert followed["follow_up"] and followed["should_respond"]
    assert slack.posts()[2]["thread_ts"] == asked
    # The held-back thread cost no model call: one judgment and one reply, for the asked one.
    assert [purpose_of(r) for r in model.requests[before:]] == ["judgment", "reply"]
    # /tomo status names both conversations, and the admin page marks follow-up decisions.
    assert f"the thread {asked} (asked" in status["text"]
    assert f"the thread {parent} (joined on my own" in status["text"]
    assert "answer it only where someone asked for me" in status["text"]
    marked = {d["latest_ts"]: d["follow_up"] for d in page["decisions"]}
    assert marked[ignored] and marked[answered] and not marked[joined]


async def test_a_follow_up_in_a_conversation_tomo_joined_is_not_cooled_down(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """The cooldown after tomo joins on its own holds its own voice back, not its answers to
    the people who then talk to it."""
    answering(model)
    settings = {"AUTONOMOUS_COOLDOWN_SECONDS": SLOW, "MAX_AUTONOMOUS_REPLIES_PER_DAY": 1}
    async with start_tomo(MIN_WAIT_SECONDS=0.2, FOLLOW_UP_WAIT_SECONDS=0.2, **settings) as tomo:
        await say(tomo, "message_plain", "is the coffee machine fixed?", user="U2")
        await posted(tomo, slack, 1)
        answer = await say(tomo, "message_plain", "oh nice, since when?", user="U2")
        await slack.wait_for_posts(2, timeout=20)
        decision = await decided(tomo, answer)
        claims = await tomo.rows("SELECT reason FROM reply ORDER BY id")
    assert decision["follow_up"] and decision["should_respond"]
    assert claims == [{"reason": "judgment"}, {"reason": "follow_up"}]
    assert [p["thread_ts"] for p in slack.posts()] == [None, None]


async def test_a_group_dm_and_the_top_level_rule(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """tomo joins a group DM's top level on its own; messages there are follow-ups while its
    post is among the last three turns (one person's consecutive lines are one turn)."""
    slack.add_channel("G1", "mpdm-alice--bob--carol-1", is_private=True)
    answering(model)
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        await say(tomo, "message_mpim", "who is bringing snacks on Friday?", channel="G1")
        await posted(tomo, slack, 1)
    answering(model, judgment=False)
    async with start_tomo(MIN_WAIT_SECONDS=SLOW, FOLLOW_UP_WAIT_SECONDS=0.2) as tomo:
        lines = [
            ("U1", "I can't"),
            ("U1", "can you remind Bob?"),
            ("U2", "I'll bring chips"),
            ("U3", "fruit from me"),
            ("U4", "drinks then"),
        ]
        stamps = [
            await say(tomo, "message_mpim", said, user=who, channel="G1") for who, said in lines
        ]
        routes = await tomo.rows(
            "SELECT route FROM message WHERE channel = 'G1' AND user_id != 'UBOT' ORDER BY ts"
        )
    assert slack.posts()[0]["channel"] == "G1" and slack.posts()[0]["thread_ts"] is None
    assert stamps
    # The question, then Alice's two lines (one turn), Bob's and Carol's follow up; Dan's
    # comes after three turns since tomo's post: the group's own talk, the normal wait.
    assert [r["route"] for r in routes] == ["judgment"] + ["follow_up"] * 4 + ["judgment"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_follow_up_pending_at_a_restart_is_judged_and_answered_once(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    backend: str,
) -> None:
    answering(model, reply="six works")
    # The wait outlasts the first life; with Procrastinate the timer itself stays in the
    # database, with the default backend recovery sets it again from the stored message.
    settings = {"JOB_BACKEND": backend, "MIN_WAIT_SECONDS": SLOW, "FOLLOW_UP_WAIT_SECONDS": 5}
    async with start_tomo(**settings) as tomo:
        thread = await mentioned_and_answered(tomo, slack, "table for four at 7?")
        follow_up = await say(tomo, "message_thread_reply", "make it six", thread_ts=thread)
        assert [t.reason for t in await tomo.timers("judgment")] == ["follow_up"]
        status = await run_command(tomo, "status", response_url=hooks.new_url())
    assert "Pending timers: follow-up judgment (a thread) in" in status["text"]
    started = time.time()
    async with start_tomo(**settings) as tomo:
        # Still a follow-up's timer: at the message's time + the wait.
        await slack.wait_for_posts(2, timeout=30)
        decision = await decided(tomo, follow_up)
        await asyncio.sleep(0.5)
        claims = await tomo.rows("SELECT reason FROM reply ORDER BY id")
    assert time.time() - started < SLOW
    assert decision["follow_up"] and decision["should_respond"]
    assert claims == [{"reason": "mention"}, {"reason": "follow_up"}]
    assert len(slack.posts()) == 2 and purposes(model) == ["reply", "judgment", "reply"]


async def test_a_follow_ups_reply_is_streamed_like_a_mentions(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """With STREAM_REPLIES=auto the mention's reply and the follow-up's are both streamed into
    the thread (a follow-up is a person's request); the follow-up is told from the streamed
    reply's claim, and the judgment in between is not streamed."""
    answering(model, reply="for six: the ramen place on 3rd has a big table")
    model.pace.every, model.pace.size = 0.05, 8
    settings = {"STREAM_REPLIES": "auto", "MIN_WAIT_SECONDS": SLOW, "FOLLOW_UP_WAIT_SECONDS": 0.2}
    async with start_tomo(**settings) as tomo:
        thread = await say(tomo, "app_mention", "<@UBOT> where should we eat tonight?")
        await wait_for(
            lambda: [s for s in slack.streams() if s["state"] == "completed"],
            what="the mention's streamed reply",
        )
        follow_up = await say(tomo, "message_thread_reply", "and for six people?", thread_ts=thread)
        await wait_for(
            lambda: len([s for s in slack.streams() if s["state"] == "completed"]) >= 2,
            what="the follow-up's streamed reply",
        )
        decision = await decided(tomo, follow_up)
        # Slack has the whole message before tomo writes down that it posted it.
        sql = "SELECT reason, status FROM reply ORDER BY id"

        async def settled() -> bool:
            return all(row["status"] == "posted" for row in await tomo.rows(sql))

        await wait_for(settled, what="both claims posted")
        claims = await tomo.rows(sql)
    assert decision["follow_up"] and decision["should_respond"]
    assert [s["thread_ts"] for s in slack.streams()] == [thread, thread]
    assert slack.posts() == []  # nothing posted whole
    assert claims == [
        {"reason": "mention", "status": "posted"},
        {"reason": "follow_up", "status": "posted"},
    ]
    judged = [r for r in model.requests if purpose_of(r) == "judgment"]
    assert len(judged) == 1 and not judged[0].get("stream")
