"""The stand-ins' streaming, as real clients see it: slack-sdk's async chat-stream helper against
the Slack stand-in (the calls slack-sdk's own tests expect), LiteLLM reading the model
stand-in's server-sent events."""

from __future__ import annotations

import time
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

import app.llm
from tests.fakes import FakeModel, FakeSlack


@pytest.fixture
def web(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.url)


async def test_the_helper_streams_a_message_start_append_stop(
    web: AsyncWebClient, slack: FakeSlack
) -> None:
    streamer = await web.chat_stream(
        channel="C1",
        thread_ts="1700000001.000100",
        recipient_team_id="T0001",
        recipient_user_id="U1",
        buffer_size=5,
    )
    await streamer.append(markdown_text="**hello")
    await streamer.append(markdown_text=" wor")
    await streamer.append(markdown_text="ld**")
    finished = await streamer.stop(metadata={"event_type": "t", "event_payload": {"n": 1}})
    methods = [m for m, _ in slack.calls]
    assert methods == ["chat.startStream", "chat.appendStream", "chat.stopStream"]
    (stream,) = slack.streams()
    assert stream["text"] == "**hello world**" and stream["state"] == "completed"
    assert finished["ts"] == streamer.ts == stream["ts"]
    assert finished["message"]["text"] == "**hello world**"
    (message,) = slack.bot_messages("C1")
    assert message["thread_ts"] == "1700000001.000100" and message["metadata"]["event_type"] == "t"


async def test_outside_a_dm_the_recipient_is_required(web: AsyncWebClient) -> None:
    with pytest.raises(SlackApiError) as refused:
        await web.chat_startStream(channel="C1", thread_ts="1.2", markdown_text="hi")
    assert refused.value.response["error"] == "missing_recipient_user_id"
    started = await web.chat_startStream(channel="D1", thread_ts="1.2", markdown_text="hi")
    assert started["ok"] and started["ts"]


async def test_a_stopped_or_expired_stream_takes_no_more_text_but_can_be_updated(
    web: AsyncWebClient, slack: FakeSlack
) -> None:
    first = await web.chat_startStream(channel="D1", thread_ts="1.2", markdown_text="a")
    await web.chat_stopStream(channel="D1", ts=first["ts"])
    second = await web.chat_startStream(channel="D1", thread_ts="1.2", markdown_text="b")
    slack.expire_streams()
    for ts in (first["ts"], second["ts"]):
        with pytest.raises(SlackApiError) as refused:
            await web.chat_appendStream(channel="D1", ts=ts, markdown_text="more")
        assert refused.value.response["error"] == "message_not_in_streaming_state"
    with pytest.raises(SlackApiError) as missing:
        await web.chat_stopStream(channel="D1", ts="9.9")
    assert missing.value.response["error"] == "message_not_found"
    updated = await web.chat_update(channel="D1", ts=second["ts"], markdown_text="whole")
    assert updated["text"] == "whole"
    assert [s["text"] for s in slack.streams()] == ["a", "whole"]


async def streamed(model: FakeModel, **options: Any) -> Any:
    """LiteLLM's stream of a completion by the model stand-in."""
    litellm = await app.llm.litellm_module()
    return await litellm.acompletion(
        model="openai/test-model",
        api_base=model.api_base,
        api_key="sk-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        **options,
    )


@pytest.mark.usefixtures("litellm_closed")
async def test_the_model_streams_server_sent_events_at_its_pace(model: FakeModel) -> None:
    model.pace.first, model.pace.every, model.pace.size = 0.3, 0.05, 4
    model.enqueue("streamed, piece by piece")
    asked = time.monotonic()
    response = await streamed(model, stream_options={"include_usage": True})
    pieces, usage = [], None
    async for chunk in response:
        usage = getattr(chunk, "usage", None) or usage
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
    assert pieces == ["stre", "amed", ", pi", "ece ", "by p", "iece"]
    assert model.stream_starts[0] - asked >= 0.3
    assert usage is not None and usage.completion_tokens == 4


@pytest.mark.usefixtures("litellm_closed")
async def test_a_stream_that_breaks_off_raises_mid_way(model: FakeModel) -> None:
    model.enqueue({"chunks": ["one ", "two ", "three"], "fail_after": 2})
    response = await streamed(model, num_retries=0)
    pieces = []
    with pytest.raises(Exception, match="fake model failure mid-stream"):
        async for chunk in response:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
    assert pieces == ["one ", "two "]
