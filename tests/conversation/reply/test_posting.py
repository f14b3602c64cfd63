"""Never twice (docs/how-tomo-works.md#reply): whatever Slack answers a post, and whether or not
tomo restarts before it knows, a reply is in Slack exactly once.

The fault matrix: Slack accepts a post and answers 500; accepts it and answers 200 with a
garbled body; accepts it and answers too late (a timeout); hangs without accepting it; answers
429. Each once within one life of tomo, and once where tomo cannot settle the outcome before
it stops (its look-ups fail too, or the rate limit outlasts its retries) and restarts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import text

from tests.conftest import StartTomo, Tomo, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack

# A slow first LiteLLM call on a busy machine must not turn the reply into the apology, nor a
# slow answer to another call (a look-up, the thread status) time out: every Slack call has the
# timeout, so it is generous, and a hang outlasts it.
SLACK_TIMEOUT = 10.0
HANG = SLACK_TIMEOUT + 5
FAST = {"MIN_WAIT_SECONDS": 30, "SLACK_TIMEOUT_SECONDS": SLACK_TIMEOUT, "LLM_TIMEOUT_SECONDS": 30}
Fault = Callable[[FakeSlack], None]

FAULTS: dict[str, tuple[Fault, Fault]] = {
    # name: (the fault within one life, the fault when tomo restarts before settling it)
    "500 after accepting": (
        lambda slack: slack.fail("chat.postMessage", status=500, accept=True),
        lambda slack: slack.fail("chat.postMessage", status=500, accept=True),
    ),
    "200 with a garbled body": (
        lambda slack: slack.garble("chat.postMessage"),
        lambda slack: slack.garble("chat.postMessage"),
    ),
    "timeout after accepting": (
        lambda slack: slack.hang("chat.postMessage", HANG, accept=True),
        lambda slack: slack.hang("chat.postMessage", HANG, accept=True),
    ),
    "hang without accepting": (
        lambda slack: slack.hang("chat.postMessage", HANG),
        lambda slack: slack.hang("chat.postMessage", HANG),
    ),
    "429": (
        lambda slack: slack.fail("chat.postMessage", status=429, retry_after=0),
        # Past slack-sdk's two retries: Slack posted nothing, the claim stays owed.
        lambda slack: slack.fail("chat.postMessage", status=429, retry_after=0, times=3),
    ),
}


async def mention(tomo: Tomo, text: str = "<@UBOT> are you there?") -> str:
    """A top-level mention that is in Slack too (its thread is where tomo answers)."""
    ts = next_ts()
    tomo.slack.add_message("C1", ts=ts, text=text, user="U1")
    return await tomo.message(text, ts=ts)


async def claim_in(tomo: Tomo, *statuses: str) -> dict[str, Any]:
    """Wait until the one claim reaches one of `statuses`; returns it."""
    marks = ", ".join(f"'{s}'" for s in statuses)
    sql = f"SELECT * FROM reply WHERE status IN ({marks})"
    await wait_for(lambda: tomo.rows(sql), what=f"a claim in {statuses}")
    (claim,) = await tomo.rows("SELECT * FROM reply")
    return claim


async def tomos_messages(tomo: Tomo, thread_ts: str) -> list[str]:
    rows = await tomo.rows(
        "SELECT ts FROM message WHERE user_id = 'UBOT' AND thread_ts = :t ORDER BY ts", t=thread_ts
    )
    return [row["ts"] for row in rows]


@pytest.mark.parametrize("fault", FAULTS)
async def test_one_post_whatever_slack_answers(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, fault: str
) -> None:
    model.enqueue("here I am")
    FAULTS[fault][0](slack)
    async with start_tomo(**FAST) as tomo:
        asked = await mention(tomo)
        claim = await claim_in(tomo, "posted", "failed", "uncertain", "interrupted")
        await asyncio.sleep(0.3)
        stored = await tomos_messages(tomo, asked)
    (post,) = slack.posts()
    assert post["thread_ts"] == asked and post["text"] == "here I am"
    assert claim["status"] == "posted" and claim["posted_ts"] == post["ts"]
    assert stored == [post["ts"]]
    assert len(model.requests) == 1


@pytest.mark.parametrize("fault", FAULTS)
async def test_one_post_when_tomo_restarts_before_it_knows(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, fault: str
) -> None:
    model.enqueue("here I am")
    FAULTS[fault][1](slack)
    slack.fail("conversations.replies", status=500, times=20)  # nor can it look the post up
    async with start_tomo(**FAST) as tomo:
        asked = await mention(tomo)
        left = await claim_in(tomo, "posted", "failed", "uncertain", "interrupted")
    assert left["status"] in ("uncertain", "interrupted")  # owed: looked up before any retry
    slack.heal()

    async with start_tomo(**FAST) as tomo:
        claim = await claim_in(tomo, "posted", "failed")
        await asyncio.sleep(0.3)
        stored = await tomos_messages(tomo, asked)
    (post,) = slack.posts()
    assert post["thread_ts"] == asked and post["text"] == "here I am"
    assert claim["status"] == "posted" and claim["posted_ts"] == post["ts"]
    assert stored == [post["ts"]]
    assert len(model.requests) == 1  # the same answer, not a new one
    lookups = slack.calls_to("conversations.replies")
    assert lookups and all(c.get("include_all_metadata") in ("1", True) for c in lookups)


async def test_a_direct_message_at_the_top_level_is_looked_up_in_the_channel_history(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("hi there")
    slack.add_channel("D1", "", is_im=True, user="U1")
    slack.garble("chat.postMessage")
    slack.fail("conversations.history", status=500, times=20)
    async with start_tomo(**FAST) as tomo:
        ts = next_ts()
        slack.add_message("D1", ts=ts, text="hello", user="U1")
        await tomo.message("hello", channel="D1", channel_type="im", ts=ts)
        await claim_in(tomo, "uncertain")
    slack.heal()
    async with start_tomo(**FAST) as tomo:
        claim = await claim_in(tomo, "posted")
    (post,) = slack.posts()
    assert post["channel"] == "D1" and post["thread_ts"] is None
    assert claim["posted_ts"] == post["ts"]
    assert slack.calls_to("conversations.history")[-1]["include_all_metadata"] == "1"


async def test_a_process_that_died_between_slacks_answer_and_storing_it_posts_nothing_more(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """As after kill -9: the post is in Slack, tomo stored neither it nor the claim's end."""
    model.enqueue("only once")
    async with start_tomo(**FAST) as tomo:
        asked = await mention(tomo)
        await claim_in(tomo, "posted")
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(text("UPDATE reply SET status = 'claimed', posted_ts = NULL"))
            await connection.execute(text("DELETE FROM message WHERE user_id = 'UBOT'"))

    async with start_tomo(**FAST) as tomo:
        claim = await claim_in(tomo, "posted")
        stored = await tomos_messages(tomo, asked)
    (post,) = slack.posts()
    assert claim["posted_ts"] == post["ts"] and stored == [post["ts"]]
    assert len(model.requests) == 1


async def test_a_long_reply_cut_short_is_finished_after_the_restart_each_part_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    parts = [f"Part {n}. " + ("word " * 700).strip() for n in range(1, 4)]
    model.enqueue("\n\n".join(parts))
    original = slack.answer

    def second_post_breaks(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "chat.postMessage" and not slack.posts():  # the first: break the next
            slack.fail("chat.postMessage", status=503, accept=True)
            slack.fail("conversations.replies", status=500, times=20)
        return original(method, params)

    slack.answer = second_post_breaks  # type: ignore[method-assign]
    async with start_tomo(**FAST) as tomo:
        asked = await mention(tomo, "<@UBOT> tell me everything")
        await claim_in(tomo, "uncertain")
    slack.answer = original  # type: ignore[method-assign]
    slack.heal()
    assert len(slack.posts()) == 2  # the second was posted, but tomo could not tell

    async with start_tomo(**FAST) as tomo:
        claim = await claim_in(tomo, "posted")
        stored = await tomos_messages(tomo, asked)
    posts = slack.posts()
    assert [p["text"].split(".")[0] for p in posts] == ["Part 1", "Part 2", "Part 3"]
    assert stored == [p["ts"] for p in posts] and claim["posted_ts"] == posts[0]["ts"]
    assert len(model.requests) == 1
