"""The Slack stand-in's task chunks as slack-sdk sends them (its TaskUpdateChunk and chat-stream
helper): recorded per stream in order, a call with only task chunks needing no text, a chunk
not of Slack's shape refused, and `refuse_tasks()` for a workspace that takes none."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes import FakeSlack

URL = "https://example.slack.com/archives/C1/p1700000000000100"


@pytest.fixture
def web(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.url)


async def test_task_chunks_start_a_stream_and_update_it(
    web: AsyncWebClient, slack: FakeSlack
) -> None:
    streamer = await web.chat_stream(
        channel="C1", thread_ts="1.2", recipient_team_id="T0001", recipient_user_id="U1"
    )
    await streamer.append(
        chunks=[TaskUpdateChunk(id="t1", title="Searching", status="in_progress")]
    )
    done = TaskUpdateChunk(
        id="t1",
        title="Searching",
        status="complete",
        sources=[UrlSourceElement(url=URL, text="#general")],
    )
    await streamer.append(markdown_text="Found it.", chunks=[done])
    await streamer.stop()
    (stream,) = slack.streams()
    assert stream["text"] == "Found it." and stream["state"] == "completed"
    assert [(t["id"], t["status"]) for t in stream["tasks"]] == [
        ("t1", "in_progress"),
        ("t1", "complete"),
    ]
    assert stream["tasks"][1]["sources"] == [{"type": "url", "url": URL, "text": "#general"}]


async def test_a_task_chunk_not_of_slacks_shape_or_refused_is_an_error(
    web: AsyncWebClient, slack: FakeSlack
) -> None:
    start = {
        "channel": "C1",
        "thread_ts": "1.2",
        "recipient_team_id": "T0001",
        "recipient_user_id": "U1",
    }
    bad = {"type": "task_update", "id": "t1", "title": "Searching", "status": "running"}
    with pytest.raises(SlackApiError) as refused:
        await web.chat_startStream(**start, chunks=[bad])
    assert refused.value.response["error"] == "invalid_chunks"
    slack.refuse_tasks()
    good = {"type": "task_update", "id": "t1", "title": "Searching", "status": "pending"}
    with pytest.raises(SlackApiError) as refused:
        await web.chat_startStream(**start, chunks=[good])
    assert refused.value.response["error"] == "invalid_chunks"
    started = await web.chat_startStream(**start, markdown_text="text still streams")
    assert started["ok"] and slack.streams()[0]["tasks"] == []
