"""Bounded work (app.conversation.reply.tool_limits), through the signed endpoint with the model
stand-in asking for tools and fetch_url reading the page stand-in on 127.0.0.1: at most 8 calls
run in one round (the others are told so), and a reply's tools together stop after their
seconds (lowered here through ToolLoop's constructor, as app.wiring.job_services builds it), after
which the model must answer (`tool_choice: "none"`), posted whole or streamed."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pytest

from app.conversation.reply.tool_loop import ToolLoop
from app.wiring import job_services
from tests.conftest import StartTomo, Tomo, next_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.model_tools import asks_for, tool_call
from tests.fakes.web_pages import FakeWeb
from tests.routes.test_metrics import BEARER, TOKEN, samples, value

SETTINGS = {
    "LLM_FUNCTION_CALLING": "true",
    "FETCH_PRIVATE_ADDRESSES": True,
    "TOOLS": "search_messages,fetch_url",
    "METRICS_TOKEN": TOKEN,
}


@pytest.fixture(scope="module")
def web() -> Iterator[FakeWeb]:
    with FakeWeb() as served:
        yield served


async def answered(tomo: Tomo, text: str) -> None:
    ts = next_ts()
    tomo.slack.add_message("C1", ts=ts, text=text, user="U1")
    await tomo.message(text, ts=ts, kind="app_mention")
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status IN ('posted', 'failed')"),
        timeout=60,
        what="the finished reply",
    )


def replies(model: FakeModel) -> list[dict[str, Any]]:
    return [r for r in model.requests if purpose_of(r) == "reply"]


def results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("stream", [False, True])
async def test_of_20_calls_in_a_round_8_run_and_12_are_told_so(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, web: FakeWeb, stream: bool
) -> None:
    page = f"{web.url}/plain.txt"
    calls = [tool_call("fetch_url", {"url": page}, id=f"c{n}") for n in range(20)]
    model.enqueue(asks_for(*calls), "The file has two lines.")
    web.reset()
    streaming = {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30} if stream else {}
    async with start_tomo(**SETTINGS | streaming) as tomo:
        await answered(tomo, f"<@UBOT> what is in <{page}>?")
        found = samples((await tomo.client.get("/metrics", headers=BEARER)).text)
    _, last = replies(model)
    told = results(last)
    assert len(told) == 20  # every call has its result, as the model's API requires
    assert all("Line one of a plain text file" in text for text in told[:8])
    for text in told[8:]:
        assert text.startswith("error: not run: at most 8 tool calls run in one round")
    assert [r["path"] for r in web.requests()] == ["/plain.txt"] * 8
    assert "tool_choice" not in last  # rounds were left: the limit is per round
    assert value(found, "tomo_tool_calls_total", tool="fetch_url", outcome="ok") == 8
    assert value(found, "tomo_tool_calls_total", tool="fetch_url", outcome="not_run") == 12
    if stream:
        (streamed,) = slack.streams()
        assert streamed["text"] == "The file has two lines."
        shown = {t["id"] for t in streamed["tasks"]}
        assert shown == {f"c{n}" for n in range(8)}  # the person sees the calls that ran
    else:
        assert slack.posts()[-1]["text"] == "The file has two lines."


@pytest.mark.parametrize("stream", [False, True])
async def test_when_the_tools_time_is_up_the_model_answers_with_what_it_has(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    web: FakeWeb,
    monkeypatch: pytest.MonkeyPatch,
    stream: bool,
) -> None:
    """A reply's tools have 2 s here (60 in production): a fast call (well within them on a
    busy machine), then a page that takes 5 s, stopped when the 2 s run out, and the call after
    it not run; the model's next call must answer, though rounds were left."""
    monkeypatch.setattr(job_services, "ToolLoop", functools.partial(ToolLoop, seconds=2.0))
    web.slow_seconds = 5.0
    plain, slow = f"{web.url}/plain.txt", f"{web.url}/slow"
    model.enqueue(
        asks_for(tool_call("fetch_url", {"url": plain}, id="fast")),
        asks_for(
            tool_call("fetch_url", {"url": slow}, id="slow"),
            tool_call("fetch_url", {"url": plain}, id="after"),
        ),
        "The first file has two lines; the other page did not answer in time.",
    )
    web.reset()
    streaming = {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30} if stream else {}
    async with start_tomo(**SETTINGS | streaming) as tomo:
        await answered(tomo, f"<@UBOT> compare <{plain}> and <{slow}>")
        found = samples((await tomo.client.get("/metrics", headers=BEARER)).text)
    first, second, last = replies(model)
    assert "tool_choice" not in second  # time was left after the first round
    assert last["tool_choice"] == "none" and last["tools"] == first["tools"]
    fast, stopped, after = results(last)
    assert "Line one" in fast
    assert stopped.startswith("error: stopped: this reply's tools have used their 2 seconds")
    assert after.startswith("error: not run: this reply's tools have used their 2 seconds")
    assert [r["path"] for r in web.requests()] == ["/plain.txt", "/slow"]
    assert value(found, "tomo_tool_calls_total", tool="fetch_url", outcome="stopped") == 1
    assert value(found, "tomo_tool_calls_total", tool="fetch_url", outcome="not_run") == 1
    text = slack.streams()[0]["text"] if stream else slack.posts()[-1]["text"]
    assert text == "The first file has two lines; the other page did not answer in time."
