"""Every LLM call is recorded in llm_call (purpose, model, tokens, latency, cost or null,
success), failures included, so the spend on the admin page is true."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from app.llm import LLMError, litellm_module
from tests.conftest import StartTomo, judgment_json, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack

ASK = [{"role": "user", "content": "hello there"}]


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


async def calls(tomo: Any) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM llm_call ORDER BY id")


async def test_a_successful_call_records_tokens_latency_and_unknown_cost(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.enqueue({"content": "hi!", "usage": usage(42, 3)})
    async with start_tomo(LLM_JUDGMENT_MODEL="openai/judge-model") as tomo:
        completion = await tomo.runtime.llm.complete(purpose="judgment", messages=ASK)
        rows = await calls(tomo)
    assert completion.text == "hi!"
    assert len(rows) == 1
    row = rows[0]
    assert row["purpose"] == "judgment" and row["model"] == "openai/judge-model"
    assert (row["prompt_tokens"], row["completion_tokens"]) == (42, 3)
    assert row["success"] and row["error"] is None
    assert row["latency_ms"] > 0 and row["started_at"] > 0
    assert row["cost_usd"] is None  # LiteLLM has no price for this model
    assert model.last_request["model"] == "judge-model"


async def test_a_known_model_is_priced_from_litellms_own_cost_map(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    from app.llm import litellm_module

    model.enqueue({"content": "hi!", "usage": usage(1000, 500)})
    async with start_tomo(LLM_MODEL="openai/gpt-4o-mini") as tomo:
        await tomo.runtime.llm.complete(purpose="reply", messages=ASK)
        rows = await calls(tomo)
    prices = (await litellm_module()).model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 500 * prices["output_cost_per_token"]
    assert rows[0]["cost_usd"] == pytest.approx(expected)
    assert rows[0]["cost_usd"] > 0


async def test_a_failed_call_is_recorded_as_a_failure_after_its_retries(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.fail(status=500, times=2)
    async with start_tomo(LLM_MAX_RETRIES=1) as tomo:
        with pytest.raises(LLMError, match="memory call"):
            await tomo.runtime.llm.complete(purpose="memory", messages=ASK)
        rows = await calls(tomo)
    assert len(model.requests) == 2  # one call, retried once: one record
    assert len(rows) == 1
    row = rows[0]
    assert row["purpose"] == "memory" and not row["success"]
    assert row["error"] and "500" in row["error"]
    assert row["prompt_tokens"] is None and row["cost_usd"] is None
    assert row["latency_ms"] >= 0


async def test_a_timed_out_call_is_recorded(start_tomo: StartTomo, model: FakeModel) -> None:
    model.delay(2.0)
    async with start_tomo(LLM_TIMEOUT_SECONDS=0.3) as tomo:
        with pytest.raises(LLMError):
            await tomo.runtime.llm.complete(purpose="reply", messages=ASK)
        rows = await calls(tomo)
    assert [(r["purpose"], r["success"]) for r in rows] == [("reply", False)]
    assert "timeout" in rows[0]["error"].lower()


async def test_judgment_and_reply_of_a_conversation_are_each_recorded(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    def responder(request: dict[str, Any]) -> dict[str, Any]:
        if purpose_of(request) == "judgment":
            return {"content": judgment_json(True, delay=0), "usage": usage(300, 20)}
        return {"content": "I can help with that", "usage": usage(400, 6)}

    model.responder = responder
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("how do I rotate the API keys?")
        await slack.wait_for_posts(1)

        async def two_calls() -> bool:
            return len(await calls(tomo)) == 2

        await wait_for(two_calls, what="two recorded calls")
        rows = await calls(tomo)
    assert [
        (r["purpose"], r["prompt_tokens"], r["completion_tokens"], r["success"]) for r in rows
    ] == [
        ("judgment", 300, 20, True),
        ("reply", 400, 6, True),
    ]


async def test_a_failed_judgment_is_recorded_and_nothing_is_posted(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.responder = lambda request: (
        judgment_json(True, delay=0) if purpose_of(request) == "judgment" else None
    )
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        model.fail(status=503, times=1)  # the judgment fails: recorded, no reply
        await tomo.message("anyone seen the release notes?")

        async def recorded() -> bool:  # the call's record, then the decision's, are written
            return len(await calls(tomo)) == 1 and bool(
                await tomo.rows("SELECT valid FROM judgment")
            )

        await wait_for(recorded, what="the failed judgment's call and decision")
        rows = await calls(tomo)
        decisions = await tomo.rows("SELECT valid, reason FROM judgment")
    assert [(r["purpose"], r["success"]) for r in rows] == [("judgment", False)]
    assert decisions and not decisions[0]["valid"]
    assert slack.posts() == []


async def test_mock_responses_are_recorded_and_never_reach_a_server(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    async with start_tomo() as tomo:
        tomo.runtime.llm.mock_response = "a canned answer"
        fixed = await tomo.runtime.llm.complete(purpose="reply", messages=ASK)
        tomo.runtime.llm.mock_response = lambda purpose, messages: f"{purpose}:{len(messages)}"
        chosen = await tomo.runtime.llm.complete(purpose="judgment", messages=ASK * 2)
        rows = await calls(tomo)
    assert (fixed.text, chosen.text) == ("a canned answer", "judgment:2")
    assert model.requests == []
    assert [(r["purpose"], r["success"]) for r in rows] == [("reply", True), ("judgment", True)]
    assert all(r["prompt_tokens"] is not None for r in rows)


async def test_whether_a_model_sees_images_is_asked_of_litellm_unless_the_setting_says(
    start_tomo: StartTomo,
) -> None:
    """LLM_VISION=auto asks LiteLLM's model map (here the local copy, no network) per model."""
    async with start_tomo(LLM_MODEL="openai/gpt-4o-mini", LLM_JUDGMENT_MODEL="openai/x") as tomo:
        assert await tomo.runtime.llm.sees_images("reply")
        assert not await tomo.runtime.llm.sees_images("judgment")  # a model LiteLLM does not know
    for setting, sees in (("true", True), ("false", False)):
        async with start_tomo(LLM_VISION=setting, LLM_MODEL="openai/gpt-4o-mini") as tomo:
            assert await tomo.runtime.llm.sees_images("reply") is sees
            assert await tomo.runtime.llm.sees_images("judgment") is sees


FIRST_CALL = """
import asyncio, sys
from app.llm import client as llm
from app.llm import prompts

llm._load()
prompts.compile_templates()
before = set(sys.modules)
asyncio.run(
    llm._module.acompletion(
        model="openai/test-model", api_base=sys.argv[1], api_key="sk-test",
        messages=[{"role": "user", "content": "hello"}], max_retries=0,
    )
)
print(" ".join(sorted(set(sys.modules) - before)))
"""


async def test_the_first_call_after_loading_imports_no_client_code(model: FakeModel) -> None:
    """What a job worker loads before /readyz says 200 (app.wiring.core.load_job_libraries) is what
    the
    first reply's call needs: the OpenAI client's API resources were imported by the first call
    (seconds of the first reply after a start, on a busy machine)."""
    model.enqueue("hi")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FIRST_CALL, model.api_base, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    imported = out.decode().split()
    assert process.returncode == 0
    assert len(model.requests) == 1
    assert [name for name in imported if name.startswith("openai.")] == []


async def test_a_streamed_answer_is_recorded_once_complete_with_its_usage_and_price(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    from app.llm import litellm_module

    model.enqueue({"content": "hello in pieces", "usage": usage(1000, 500)})
    async with start_tomo(LLM_MODEL="openai/gpt-4o-mini") as tomo:
        pieces = [p async for p in tomo.runtime.llm.stream(purpose="reply", messages=ASK)]
        rows = await calls(tomo)
    assert "".join(pieces) == "hello in pieces" and len(pieces) > 1
    assert model.last_request["stream"] is True
    (row,) = rows
    assert row["purpose"] == "reply" and row["success"]
    assert (row["prompt_tokens"], row["completion_tokens"]) == (1000, 500)
    prices = (await litellm_module()).model_cost["gpt-4o-mini"]
    expected = 1000 * prices["input_cost_per_token"] + 500 * prices["output_cost_per_token"]
    assert row["cost_usd"] == pytest.approx(expected)


async def test_a_stream_that_breaks_off_is_recorded_as_failed_and_raises_ours(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.enqueue({"chunks": ["one ", "two"], "fail_after": 1})
    async with start_tomo() as tomo:
        pieces: list[str] = []
        with pytest.raises(LLMError):
            async for piece in tomo.runtime.llm.stream(purpose="reply", messages=ASK):
                pieces.append(piece)
        rows = await calls(tomo)
    assert pieces == ["one "]
    (row,) = rows
    assert not row["success"] and row["error"]


async def test_a_stop_closes_and_forgets_the_http_clients_litellm_made(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    """LiteLLM keeps a client per event loop for minutes and cannot close one once its loop
    has ended; tomo's stop closes them (app.llm.connections), so no socket to the model is
    left for the garbage collector to find in some later test."""
    model.enqueue("hi!")
    async with start_tomo() as tomo:
        await tomo.runtime.llm.complete(purpose="reply", messages=ASK)
        cache = (await litellm_module()).in_memory_llm_clients_cache
        made = list(cache.cache_dict.values())
    assert made and cache.cache_dict == {}
    for client in made:  # an OpenAI SDK client or LiteLLM's own handler: an httpx client inside
        http = getattr(client, "_client", None) or client.client
        assert http.is_closed
