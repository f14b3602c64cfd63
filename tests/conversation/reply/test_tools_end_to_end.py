"""The real tools through the signed endpoint (docs/tools.md): a mention whose model searches
stored messages gets what the channel it is posted in may show, with permalinks, and never a
private channel's words; the calls are counted in /metrics. Real LiteLLM against the model
stand-in, real slack-sdk against the Slack stand-in, the real index of the database."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import StartTomo, Tomo, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.model_tools import asks_for, tool_call
from tests.routes.test_metrics import BEARER, TOKEN, samples, value
from tests.tools.workspace import build, store

SETTINGS = {"LLM_FUNCTION_CALLING": "true", "METRICS_TOKEN": TOKEN, "MIN_WAIT_SECONDS": 60}


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def answered(tomo: Tomo, slack: FakeSlack, *, channel: str, text: str, **extra: Any) -> str:
    ts = next_ts()
    slack.add_message(channel, ts=ts, text=text, user=extra.get("user", "U1"))
    await tomo.message(text, channel=channel, ts=ts, **extra)
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status IN ('posted', 'failed')"),
        timeout=60,
        what="the finished reply",
    )
    return ts


@pytest.mark.parametrize("word", ["zebracorn", "秘密会議", "予算"])
async def test_a_mention_in_a_public_channel_never_finds_a_private_channels_words(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, word: str
) -> None:
    build(slack)
    model.enqueue(
        asks_for(
            tool_call("search_messages", {"query": word}, id="call_1"),
            tool_call("search_messages", {"query": word, "channel": "#secret"}, id="call_2"),
        ),
        "I could not find that.",
    )
    async with start_tomo(**SETTINGS) as tomo:
        await store(tomo, "G1", f"the {word} is on Friday: zebracorn 秘密会議 予算")
        await answered(tomo, slack, channel="C1", text=f"<@UBOT> what about {word}?")
        found = samples((await tomo.client.get("/metrics", headers=BEARER)).text)
    first, second = tool_results(model.requests[1])
    # The public mention itself may be found; the private channel's message never is, nor is
    # anything of the channel named in the arguments.
    assert "Friday" not in first + second and "archives/G1" not in first + second
    assert "what about" in first and second == "No messages found."
    assert slack.posts()[-1]["text"] == "I could not find that."
    assert value(found, "tomo_tool_calls_total", tool="search_messages", outcome="ok") == 2


async def test_a_members_dm_finds_the_private_words_with_their_permalink(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    build(slack)
    model.enqueue(
        asks_for(tool_call("search_messages", {"query": "秘密会議"}, id="call_1")),
        "It is on Friday.",
    )
    async with start_tomo(**SETTINGS) as tomo:
        said = await store(tomo, "G1", "the 秘密会議 is on Friday")
        await answered(tomo, slack, channel="D1", text="when is the 秘密会議?", channel_type="im")
        found = samples((await tomo.client.get("/metrics", headers=BEARER)).text)
    (result,) = tool_results(model.requests[1])
    assert "the 秘密会議 is on Friday" in result
    assert f"https://fake.slack.test/archives/G1/p{said.replace('.', '')}" in result
    assert value(found, "tomo_tool_calls_total", tool="search_messages", outcome="ok") == 1


async def test_a_call_the_tools_cannot_take_is_counted_and_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue(
        asks_for(
            tool_call("drop_tables", {}, id="call_1"),
            tool_call("read_thread", "not json", id="call_2"),
        ),
        "Sorry, I could not look.",
    )
    async with start_tomo(**SETTINGS) as tomo:
        await answered(tomo, slack, channel="C1", text="<@UBOT> read the thread")
        found = samples((await tomo.client.get("/metrics", headers=BEARER)).text)
    unknown, broken = tool_results(model.requests[1])
    assert unknown.startswith("error:") and broken.startswith("error:")
    assert value(found, "tomo_tool_calls_total", tool="unknown", outcome="unknown_tool") == 1
    assert value(found, "tomo_tool_calls_total", tool="read_thread", outcome="bad_arguments") == 1
    assert json.loads(json.dumps(slack.posts()[-1]))["text"] == "Sorry, I could not look."
