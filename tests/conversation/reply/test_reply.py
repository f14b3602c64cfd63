"""The reply job end to end (docs/how-tomo-works.md#reply): the prompt, the post, never twice,
failures."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

from app.conversation.locks import ConversationLocks
from app.conversation.reply.prompt import Turns, conversation_turns
from app.conversation.reply.words import apology
from app.domain import ChatMessage, ReplyReason
from tests.conftest import StartTomo, Tomo, judgment_json, next_ts, purpose_of, turns_of, wait_for
from tests.fakes import FakeModel, FakeSlack


def answer_by_purpose(
    model: FakeModel, *, judgment: str = judgment_json(True), reply: str = "hello!"
) -> None:
    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) == "judgment":
            return judgment
        if reply == "FAIL":
            raise RuntimeError("the reply model is down")
        return reply

    model.responder = responder


async def say(tomo: Tomo, text: str, **fields: Any) -> str:
    """A message that is both in Slack (for conversations.replies) and delivered as an event."""
    ts = fields.pop("ts", None) or next_ts()
    user = fields.get("user", "U1")
    tomo.slack.add_message(
        fields.get("channel", "C1"),
        ts=ts,
        text=text,
        user=user,
        bot_id=fields.get("bot_id"),
        thread_ts=fields.get("thread_ts"),
    )
    return await tomo.message(text, ts=ts, **fields)


async def claims(tomo: Tomo) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM reply ORDER BY id")


async def settled(tomo: Tomo, status: str = "posted") -> None:
    """Wait until a claim is finished with `status` (after the post was stored)."""
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status = :s", s=status),
        what=f"a {status} claim",
    )


async def test_the_reply_request_is_a_system_message_then_the_conversation_as_turns(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="Sure, Friday works.")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        parent = await say(tomo, "planning the offsite", user="U2")
        await say(tomo, "I vote for the beach", user="U2", thread_ts=parent)
        await say(tomo, "the beach sounds lovely!", user="UBOT", bot_id="BBOT", thread_ts=parent)
        mention = await say(tomo, "<@UBOT> can you do Friday?", thread_ts=parent)
        (post,) = await slack.wait_for_posts(1)
        await settled(tomo)
        mine = await tomo.rows("SELECT * FROM message WHERE ts = :ts", ts=post["ts"])
        (claim,) = await claims(tomo)
    (request,) = model.requests
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["system", "user", "user", "assistant", "user", "system"]
    system, *turns, now = request["messages"]
    assert now["content"].startswith("Current time:")  # last: everything before it is shared
    assert "planning the offsite" in system["content"] or "#general" in system["content"]
    assert turns[0]["content"].startswith("<@U2>") and turns[0]["content"].endswith(
        "planning the offsite"
    )
    assert turns[1]["content"].startswith("<@U2>") and "beach" in turns[1]["content"]
    assert turns[2] == {"role": "assistant", "content": "the beach sounds lovely!"}
    assert turns[3]["content"].startswith("<@U1>")
    assert turns[3]["content"].endswith("<@UBOT> can you do Friday?")
    assert post["thread_ts"] == parent and post["text"] == "Sure, Friday works."
    (row,) = mine
    assert (row["user_id"], row["bot_id"], row["thread_ts"]) == ("UBOT", "BBOT", parent)
    assert row["text"] == "Sure, Friday works."
    assert claim["trigger_ts"] == mention and claim["status"] == "posted"
    assert claim["posted_ts"] == post["ts"] and claim["reason"] == "mention"


async def test_a_top_level_reply_turns_use_the_stored_top_level_messages(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="welcome back!")
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        await tomo.message("back from holidays", user="U2")
        await tomo.message("how was it?", user="U1")
        await slack.wait_for_posts(1)
    reply_request = next(r for r in model.requests if purpose_of(r) == "reply")
    turns = turns_of(reply_request)
    assert [t["content"].split(":", 1)[0].split(" ")[0] for t in turns] == ["<@U2>", "<@U1>"]
    assert turns[-1]["content"].endswith("how was it?")
    assert slack.calls_to("conversations.replies") == []  # the top level uses stored messages


async def test_never_twice_for_the_same_latest_message(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    slack.delay("chat.postMessage", 0.2)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        ts = await tomo.message("<@UBOT> hi")
        runs = [
            tomo.runtime.reply.run(channel="C1", thread_ts=ts, latest_ts=ts, reason="mention")
            for _ in range(2)
        ]
        results = await asyncio.gather(*runs)
        await slack.wait_for_posts(1)
        # A second reply job for the same mention, after the first was posted.
        await tomo.runtime.timer_policy.schedule_reply(
            channel="C1", thread_ts=ts, run_at=time.time(), latest_ts=ts, reason=ReplyReason.MENTION
        )
        await asyncio.sleep(0.5)
        stored = await claims(tomo)
    assert len(slack.posts()) == 1
    assert sum(1 for posted in results if posted) <= 1
    assert len(stored) == 1 and stored[0]["status"] == "posted"


async def test_the_claim_alone_prevents_a_second_post_across_processes(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Two processes do not share the in-memory lock: the database claim decides."""
    answer_by_purpose(model)
    model.delay(0.3, times=2)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        ts = await tomo.message("<@UBOT> only once", thread_ts=None)
        await slack.wait_for_posts(1)
        # Slack's ts grows with time: a message after tomo's post has a later ts.
        await tomo.message("<@UBOT> and now?", thread_ts=ts, user="U2", ts=f"{time.time():.6f}")
        other = copy.copy(tomo.runtime.reply)
        other._locks = ConversationLocks()  # as if it ran in another process
        both = await asyncio.gather(
            tomo.runtime.reply.run(channel="C1", thread_ts=ts, reason="mention"),
            other.run(channel="C1", thread_ts=ts, reason="mention"),
        )
        await asyncio.sleep(0.4)
    assert len(slack.posts()) == 2  # one for each mention, never two for the second
    assert len([posted for posted in both if posted]) <= 1


async def test_a_429_on_posting_is_retried_after_retry_after_and_posted_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="made it")
    slack.fail("chat.postMessage", status=429, retry_after=1)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        started = time.monotonic()
        await tomo.message("<@UBOT> hello")
        (post,) = await slack.wait_for_posts(1)
        waited = time.monotonic() - started
        await settled(tomo)
        (claim,) = await claims(tomo)
    assert post["text"] == "made it"
    assert len(slack.calls_to("chat.postMessage")) == 2 and len(slack.posts()) == 1
    assert waited >= 1.0  # Retry-After was honoured
    assert claim["status"] == "posted"


async def test_a_post_that_keeps_failing_is_looked_up_before_each_new_attempt_then_stays_owed(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Slack answers every post 500 and has none of them: each is looked up before the next
    attempt; after the last, the claim stays owed (`uncertain`) and the service healthy."""
    answer_by_purpose(model)
    slack.fail("chat.postMessage", status=500, times=10)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await say(tomo, "<@UBOT> hello")
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'uncertain'"),
            what="the unsettled claim",
        )
        health = await tomo.client.get("/healthz")
        (claim,) = await claims(tomo)
    methods = [m for m, _ in slack.calls if m in ("chat.postMessage", "conversations.replies")]
    assert slack.posts() == [] and health.status_code == 200
    post, lookup = "chat.postMessage", "conversations.replies"
    assert methods == [post, lookup, post, lookup, post, lookup]  # never two posts in a row
    assert claim["status"] == "uncertain" and claim["posted_ts"] is None
    assert "chat.postMessage" in claim["error"]


async def test_an_empty_or_unusable_answer_to_a_mention_gets_the_apology(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers = iter(["", "   \n\t ", "\u200b\u200b", "**  **"])
    model.responder = lambda _request: next(answers)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        mentions = [await tomo.message(f"<@UBOT> question {n}") for n in range(2)]
        for dm in ("D1", "D2"):
            await tomo.message("a question", channel=dm, channel_type="im")
        await slack.wait_for_posts(4)
        await wait_for(
            lambda: _count(tomo, "SELECT 1 FROM reply WHERE status = 'failed'", 4),
            what="four failed claims",
        )
        stored = await claims(tomo)
    posts = slack.posts()
    assert sorted(p["thread_ts"] or p["channel"] for p in posts) == sorted([*mentions, "D1", "D2"])
    assert {p["text"] for p in posts} == {apology("en")}
    assert all("unusable answer" in c["error"] for c in stored)
    assert all(c["posted_ts"] for c in stored)


async def test_an_empty_answer_to_an_autonomous_reply_posts_nothing(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply=" \n ")
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("anyone up for coffee?")
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'failed'"),
            what="the failed claim",
        )
        await asyncio.sleep(0.2)
        (claim,) = await claims(tomo)
    assert slack.posts() == [] and "unusable answer" in claim["error"]


async def _count(tomo: Tomo, sql: str, n: int) -> bool:
    return len(await tomo.rows(sql)) >= n


async def test_model_outage_autonomous_reply_posts_nothing(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="FAIL")
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("anyone up for coffee?")
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'failed'"),
            what="the failed claim",
        )
        await asyncio.sleep(0.2)
        health = await tomo.client.get("/healthz")
        calls = await tomo.rows("SELECT purpose, success FROM llm_call ORDER BY started_at")
    assert slack.posts() == []
    assert health.status_code == 200
    assert calls == [
        {"purpose": "judgment", "success": True},
        {"purpose": "reply", "success": False},
    ]


async def test_model_outage_on_a_mention_posts_a_short_apology(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.fail(status=500, times=20)
    async with start_tomo(MIN_WAIT_SECONDS=30, LLM_MAX_RETRIES=0) as tomo:
        ts = await tomo.message("<@UBOT> are you ok?")
        (post,) = await slack.wait_for_posts(1)

        async def claim_failed() -> bool:  # the apology is posted, then the claim marked
            return [c["status"] for c in await claims(tomo)] == ["failed"]

        await wait_for(claim_failed, what="the claim marked failed")
        health = await tomo.client.get("/healthz")
        (claim,) = await claims(tomo)
    assert post["thread_ts"] == ts and 0 < len(post["text"]) < 300
    assert len(model.requests) == 1  # LLM_MAX_RETRIES=0: no retry
    assert health.status_code == 200
    assert claim["status"] == "failed" and "reply call" in claim["error"]


async def test_the_apology_is_in_the_language_of_the_message_it_answers(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.fail(status=500, times=20)
    async with start_tomo(MIN_WAIT_SECONDS=30, LLM_MAX_RETRIES=0) as tomo:
        english = await tomo.message("<@UBOT> are you ok?")
        japanese = await tomo.message("<@UBOT> 大丈夫ですか?", channel="C2")
        posts = await slack.wait_for_posts(2)
    said = {p["thread_ts"]: p["text"] for p in posts}
    assert said == {english: apology("en"), japanese: apology("ja")}
    assert said[english].startswith("Sorry") and said[japanese].startswith("ごめんなさい")


async def test_model_timeout_is_handled_like_an_outage(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.delay(30.0, times=5)  # far longer than any busy machine takes to time out at 0.5 s
    async with start_tomo(MIN_WAIT_SECONDS=30, LLM_TIMEOUT_SECONDS=0.5) as tomo:
        started = time.monotonic()
        await tomo.message("<@UBOT> still there?")
        (post,) = await slack.wait_for_posts(1)
        waited = time.monotonic() - started
        health = await tomo.client.get("/healthz")
    assert waited < 20 and len(post["text"]) < 300  # the model would have taken 30 s
    assert len(model.requests) == 1
    assert health.status_code == 200


async def test_markdown_becomes_mrkdwn_and_broadcast_pings_are_neutralised(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(
        model,
        reply="**Heads up** <!channel> and @here: see [the docs](https://example.com/d)",
    )
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("<@UBOT> what's new?")
        (post,) = await slack.wait_for_posts(1)
    text = post["text"]
    assert text.startswith("*Heads up*")
    assert "<https://example.com/d|the docs>" in text
    assert "<!channel>" not in text and "@here" not in text
    assert "channel" in text and "here" in text  # still readable


async def test_a_long_answer_is_split_into_several_posts_in_the_same_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    paragraphs = [f"Part {n}. " + ("word " * 700).strip() for n in range(1, 4)]
    answer_by_purpose(model, reply="\n\n".join(paragraphs))
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        ts = await tomo.message("<@UBOT> tell me everything")
        await slack.wait_for_posts(2)
        await settled(tomo)
        mine = await tomo.rows("SELECT ts FROM message WHERE user_id = 'UBOT' ORDER BY ts")
    posts = slack.posts()
    assert len(posts) >= 2 and all(p["thread_ts"] == ts for p in posts)
    assert all(len(p["text"]) <= 4000 for p in posts)
    assert "".join(p["text"] for p in posts).replace("\n", "").count("Part ") == 3
    assert [r["ts"] for r in mine] == [p["ts"] for p in posts]


def test_a_long_top_level_conversation_keeps_its_first_turn_for_a_while() -> None:
    """At a channel's top level or in a DM, the turns are at most THREAD_HISTORY_LIMIT of the
    latest, starting at a block boundary: the first turn moves on only every half limit, so
    consecutive replies share their start (a prefix providers can cache)."""

    def message(n: int) -> ChatMessage:
        return ChatMessage(
            ts=f"1700000000.{n:06d}", thread_ts="", user_id="U1", author="Alice",
            text=f"message {n}", created_at=1_700_000_000 + n, from_self=False,
        )  # fmt: skip

    firsts, sizes = [], []
    for count in range(21, 41):  # the trigger and the count - 1 messages before it
        messages = tuple(message(n) for n in range(count))
        turns = conversation_turns(messages, Turns(messages[-1].ts, 20, threaded=False))
        firsts.append(turns[0]["content"])
        sizes.append(len(turns) - 1)
    assert all(11 <= size <= 20 for size in sizes)
    # 20 messages more, two moves of the start, by half the limit each (10 messages).
    moves = [n for n in range(1, len(firsts)) if firsts[n] != firsts[n - 1]]
    assert moves == [1, 11]
