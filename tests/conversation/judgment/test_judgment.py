"""The judgment job end to end (docs/how-tomo-works.md#judgment): skips, one system message, stored
decisions."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from tests.conftest import StartTomo, judgment_json, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack


def answer_by_purpose(model: FakeModel, *, judgment: str, reply: str = "hello!") -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment if purpose_of(request) == "judgment" else reply

    model.responder = responder


def purposes(model: FakeModel) -> list[str]:
    return [purpose_of(request) for request in model.requests]


async def decisions(tomo: Any) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM judgment ORDER BY decided_at")


async def test_should_respond_with_no_delay_posts_one_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0, reason="a question"))
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        ts = await tomo.message("does anyone know a good ramen place?")
        posts = await slack.wait_for_posts(1)
        await asyncio.sleep(0.3)
        stored = await decisions(tomo)
    assert len(slack.posts()) == 1 and posts[0]["thread_ts"] is None
    assert purposes(model) == ["judgment", "reply"]
    (decision,) = stored
    assert decision["latest_ts"] == ts and decision["thread_ts"] == ""
    assert decision["should_respond"] and decision["valid"]
    assert decision["reason"] == "a question" and decision["confidence"] == 0.9
    assert decision["model"].endswith("test-model")
    assert decision["prompt_tokens"] > 0 and decision["completion_tokens"] > 0


async def test_judgment_prompt_is_one_system_message_with_the_conversation_last(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    async with start_tomo(MIN_WAIT_SECONDS=0.1, PERSONA_NAME="Mimi") as tomo:
        async with tomo.timers_held():  # the thread reply comes before the parent's judgment
            parent = await tomo.message("top-level chatter", user="U2")
            await tomo.message("in the thread", thread_ts=parent)
        await model.wait_for_requests(1)
    (message,) = model.requests[0]["messages"]
    prompt = message["content"]
    assert message["role"] == "system"
    assert "Mimi" in prompt and '"should_respond"' in prompt and "delay_seconds" in prompt
    # Stable first (the criteria), then the channel oldest first, then what is judged and the
    # time, last.
    assert prompt.index("Do not respond when") < prompt.index("top-level chatter")
    assert prompt.index("top-level chatter") < prompt.index("in the thread")
    judged = prompt.index(f"To judge: the thread {parent}")
    assert prompt.index("in the thread") < judged < prompt.rindex("in the thread")
    assert judged < prompt.index("Current time")


async def test_should_not_respond_stays_silent_and_is_stored_with_its_reason(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False, reason="people are chatting"))
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        ts = await tomo.message("see you tomorrow!")
        await wait_for(lambda: bool(model.requests), what="the judgment")
        await wait_for(lambda: decisions(tomo), what="the stored decision")
        await asyncio.sleep(0.3)
        (decision,) = await decisions(tomo)
        jobs = [job.id for job in (await tomo.runtime.timers.list()) if job.kind == "reply"]
    assert slack.posts() == [] and purposes(model) == ["judgment"] and jobs == []
    assert decision["latest_ts"] == ts and decision["valid"] and not decision["should_respond"]
    assert decision["reason"] == "people are chatting" and decision["confidence"] == 0.9
    assert decision["model"] and decision["prompt_tokens"] and decision["completion_tokens"]


async def test_an_unparseable_answer_is_silent_and_stored_invalid(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment='Sure! {"should_respond": "maybe"} is my answer')
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("hmm")
        await wait_for(lambda: decisions(tomo), what="the stored decision")
        await asyncio.sleep(0.3)
        (decision,) = await decisions(tomo)
    assert slack.posts() == [] and purposes(model) == ["judgment"]
    assert not decision["valid"] and not decision["should_respond"]
    assert "should_respond" in decision["reason"]


async def test_a_fenced_answer_with_chatter_is_understood(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    fenced = "Let me think.\n```json\n" + judgment_json(True, delay=None) + "\n```\nDone."
    answer_by_purpose(model, judgment=fenced)
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("anyone?")
        await slack.wait_for_posts(1)
        (decision,) = await decisions(tomo)
    assert decision["valid"] and decision["should_respond"] and decision["delay_seconds"] is None


async def test_delay_is_clamped_to_the_maximum(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=9999))
    # A maximum long enough to see the reply's timer before it runs, on a busy machine too.
    async with start_tomo(MIN_WAIT_SECONDS=0.1, MAX_REPLY_DELAY_SECONDS=5) as tomo:
        await tomo.message("anyone?")
        await wait_for(
            lambda: tomo.timers("reply"),
            what="the reply timer",
        )
        (decision,) = await decisions(tomo)
        (job,) = [job for job in (await tomo.runtime.timers.list()) if job.kind == "reply"]
        await slack.wait_for_posts(1)
    assert decision["delay_seconds"] == 5
    assert job.seconds_left is not None and job.seconds_left <= 5
    assert decision["reply_at"] - decision["decided_at"] == pytest.approx(5)


async def test_a_delayed_reply_is_cancelled_by_a_new_message_then_judged_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers = iter([judgment_json(True, delay=1), judgment_json(False, reason="they're fine")])

    def responder(request: dict[str, Any]) -> str:
        return next(answers) if purpose_of(request) == "judgment" else "late reply"

    model.responder = responder
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("is the build broken?")
        # The decision is stored first, then its reply timer is set: wait for the timer.

        async def reply_timer_set() -> bool:
            return [t.id for t in await tomo.timers("reply")] == ["reply:C1:"]

        await wait_for(reply_timer_set, what="the reply timer of the first decision")
        second = await tomo.message("never mind, fixed it", user="U2")
        assert not [job for job in (await tomo.runtime.timers.list()) if job.kind == "reply"]
        await wait_for(lambda: len(model.requests) == 2, what="a new judgment")
        await asyncio.sleep(1.2)  # past the cancelled reply's time
        stored = await decisions(tomo)
    assert slack.posts() == []
    assert purposes(model) == ["judgment", "judgment"]
    assert [d["should_respond"] for d in stored] == [True, False]
    assert stored[-1]["latest_ts"] == second


async def test_no_judgment_when_tomo_spoke_last(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True))
    async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:
        await tomo.message("good morning")
        await tomo.message("morning! ☀️", user="UBOT", bot_id="BBOT")  # tomo's own post
        await asyncio.sleep(0.6)
        stored = await decisions(tomo)
    assert model.requests == [] and stored == [] and slack.posts() == []


async def test_no_judgment_for_a_message_older_than_the_maximum_age(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True))
    async with start_tomo(MIN_WAIT_SECONDS=0.1, MAX_MESSAGE_AGE_SECONDS=60) as tomo:
        await tomo.message("from long ago", ts=f"{time.time() - 120:.6f}")
        await asyncio.sleep(0.4)
        stored = await decisions(tomo)
    assert model.requests == [] and stored == [] and slack.posts() == []


async def test_a_message_already_judged_is_not_judged_again(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        ts = await tomo.message("just saying")
        await wait_for(lambda: decisions(tomo), what="the decision")
        # The same conversation judged again (a duplicate timer, a restart) costs nothing.
        await tomo.runtime.timer_policy.schedule_judgment(
            channel="C1", thread_ts="", run_at=time.time(), latest_ts=ts
        )
        again = await tomo.runtime.judgment.run(channel="C1", thread_ts="", latest_ts=ts)
        await asyncio.sleep(0.3)
        stored = await decisions(tomo)
    assert again is None
    assert len(model.requests) == 1 and len(stored) == 1


async def test_a_model_failure_during_judgment_is_stored_invalid_and_silent(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.fail(status=500, times=5)
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("hello?")
        await wait_for(lambda: decisions(tomo), what="the decision")
        (decision,) = await decisions(tomo)
        health = await tomo.client.get("/healthz")
    assert not decision["valid"] and "model failed" in decision["reason"]
    assert slack.posts() == [] and health.status_code == 200


async def test_judgment_and_reply_use_their_own_models(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0))
    async with start_tomo(MIN_WAIT_SECONDS=0.1, LLM_JUDGMENT_MODEL="openai/judge-model") as tomo:
        await tomo.message("anyone?")
        await slack.wait_for_posts(1)
        (decision,) = await decisions(tomo)
    assert [(purpose_of(r), r["model"]) for r in model.requests] == [
        ("judgment", "judge-model"),
        ("reply", "test-model"),
    ]
    assert decision["model"].endswith("judge-model")


async def test_a_failed_model_call_is_retried_when_retries_are_allowed(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0))
    model.fail(status=500, times=1)
    async with start_tomo(MIN_WAIT_SECONDS=0.1, LLM_MAX_RETRIES=1) as tomo:
        await tomo.message("anyone?")
        await slack.wait_for_posts(1)
        (decision,) = await decisions(tomo)
    assert decision["valid"] and decision["should_respond"]
    assert [purpose_of(r) for r in model.requests] == ["judgment", "judgment", "reply"]


async def test_an_anthropic_model_gets_its_stable_start_marked_cacheable(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    """Where the provider caches only what is marked (Anthropic, through LiteLLM), the
    judgment's stable start (persona, criteria, memories) carries the mark and the
    conversation does not; the tokens it reports read from its cache are recorded."""
    model.responder = lambda request: judgment_json(False)
    async with start_tomo(
        MIN_WAIT_SECONDS=0.1, LLM_JUDGMENT_MODEL="anthropic/claude-3-5-haiku-20241022"
    ) as tomo:
        await tomo.message("who is bringing the cake on friday?")
        await model.wait_for_requests(1)
        await tomo.message("I can bring it")
        await model.wait_for_requests(2)
        await wait_for(lambda: _calls(tomo, 2), what="both calls recorded")
        calls = await tomo.rows("SELECT model, cached_tokens FROM llm_call ORDER BY id")
    first, second = model.requests
    [stable] = first["system"]
    [turn] = first["messages"]  # Anthropic wants a turn besides the system prompt
    conversation = json.dumps(turn["content"], ensure_ascii=False)
    assert stable["cache_control"] == {"type": "ephemeral"} and turn["role"] == "user"
    assert "Do not respond when" in stable["text"] and "cake" not in stable["text"]
    assert "cake" in conversation and "Current time" in conversation
    assert second["system"] == [stable]
    assert calls[0]["cached_tokens"] == 0 and calls[1]["cached_tokens"] > 0


async def _calls(tomo: Any, n: int) -> bool:
    return len(await tomo.rows("SELECT 1 FROM llm_call")) >= n
