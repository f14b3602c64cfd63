"""Where Slack refuses the feedback buttons (`invalid_blocks`), the reply goes without them:
nothing lost, never twice, logged once per process; and a post Slack may have taken with its
buttons is still looked up before it is sent again (docs/how-tomo-works.md#feedback). A
streamed reply gets them on its stop, or on the chat.update that finishes a stream Slack
would not stop."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from app.slack.interactive.feedback_blocks import claim_of_block
from tests.assistant.helpers import answer_by_purpose, settled, with_blocks
from tests.conftest import StartTomo, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack

STREAM = {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30}
REFUSED = "Slack refused the feedback buttons"


def refusals(caplog: pytest.LogCaptureFixture) -> int:
    return sum(REFUSED in r.getMessage() for r in caplog.records)


async def test_a_refused_block_posts_the_reply_without_it_once_and_logs_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    answer_by_purpose(model, reply="here you are")
    slack.refuse_blocks()
    async with start_tomo() as tomo:
        await tomo.message("<@UBOT> first", kind="app_mention")
        await slack.wait_for_posts(1)
        await settled(tomo)
        await tomo.message("<@UBOT> second", kind="app_mention")
        await slack.wait_for_posts(2)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted' AND id = 2"),
            what="the second reply",
        )
        claims = await tomo.rows("SELECT status, posted_ts FROM reply ORDER BY id")
    posts = with_blocks(slack, slack.posts())
    assert [p["text"] for p in posts] == ["here you are", "here you are"]
    assert all("blocks" not in p for p in posts)
    sent = slack.calls_to("chat.postMessage")
    # The first reply: refused with its buttons, then posted without; the second: without.
    assert ["blocks" in call for call in sent] == [True, False, False]
    assert [c["status"] for c in claims] == ["posted", "posted"]
    assert [c["posted_ts"] for c in claims] == [p["ts"] for p in posts]
    assert refusals(caplog) == 1


async def test_a_post_slack_took_with_its_buttons_and_answered_500_is_not_posted_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="only once")
    slack.fail("chat.postMessage", status=500, accept=True)
    async with start_tomo() as tomo:
        await tomo.message("<@UBOT> hello", kind="app_mention")
        await settled(tomo)
    (post,) = with_blocks(slack, slack.posts())
    assert post["text"] == "only once" and post["blocks"][-1]["type"] == "context_actions"
    assert len(slack.calls_to("chat.postMessage")) == 1  # found by its metadata instead


async def streamed_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, text: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`text` streamed as the reply to a mention: its one stream, and its claim (id, status,
    posted_ts)."""
    model.enqueue(text)
    ts = next_ts()
    slack.add_message("C1", ts=ts, text="<@UBOT> go", user="U1")
    async with start_tomo(**STREAM) as tomo:
        await tomo.message("<@UBOT> go", ts=ts)
        await settled(tomo)
        (claim,) = await tomo.rows("SELECT id, status, posted_ts FROM reply")
    (stream,) = slack.streams()
    return stream, claim


async def test_a_streamed_reply_gets_the_buttons_on_its_stop(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    text = "Streaming along, with buttons at the end."
    stream, claim = await streamed_reply(start_tomo, slack, model, text)
    (stop,) = slack.calls_to("chat.stopStream")
    assert stream["state"] == "completed"
    assert stream["text"] == "Streaming along, with buttons at the end."
    (block,) = stream["blocks"]
    assert (
        block["type"] == "context_actions" and block["block_id"] == f"tomo_feedback:{claim['id']}"
    )
    assert block["elements"][0]["type"] == "feedback_buttons"
    assert stop["blocks"] == stream["blocks"] and slack.posts() == []


async def test_a_refused_block_on_the_stop_stops_the_stream_without_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    slack.refuse_blocks()
    stream, claim = await streamed_reply(
        start_tomo, slack, model, "Streaming along, the buttons refused."
    )
    stops = slack.calls_to("chat.stopStream")
    assert ["blocks" in stop for stop in stops] == [True, False]
    assert stream["state"] == "completed" and "blocks" not in stream
    assert stream["text"] == "Streaming along, the buttons refused."
    assert not stream["updated"]  # stopped, not rewritten
    assert claim["posted_ts"] == stream["ts"] and slack.posts() == []
    assert len(slack.bot_messages("C1")) == 1
    assert refusals(caplog) == 1


async def finished_by_update(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, text: str
) -> tuple[dict[str, Any], int]:
    """A streamed reply Slack will not stop (the stop and the second try at it answered
    `internal_error`): the message is finished by chat.update. Its stream and the claim's id."""
    slack.fail("chat.stopStream", error="internal_error", times=2)
    stream, claim = await streamed_reply(start_tomo, slack, model, text)
    assert stream["updated"] and stream["text"] == text  # rewritten whole
    assert claim["posted_ts"] == stream["ts"] and slack.posts() == []
    assert len(slack.bot_messages("C1")) == 1
    return stream, claim["id"]


async def test_a_streamed_message_finished_by_chat_update_shows_its_text_then_the_buttons(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    text = "**Streaming along**, then a stop refused, and the message written whole."
    stream, claim = await finished_by_update(start_tomo, slack, model, text)
    (update,) = slack.calls_to("chat.update")
    # chat.update takes no markdown_text beside blocks: the markdown goes in a markdown block.
    assert "markdown_text" not in update and update["text"] == text
    markdown, buttons = slack.blocks_of("C1", stream["ts"]) or []
    assert markdown == {"type": "markdown", "text": text}
    assert buttons["type"] == "context_actions"
    assert claim_of_block(buttons["block_id"]) == claim
    assert buttons["elements"][0]["type"] == "feedback_buttons"


async def test_a_refused_block_on_chat_update_rewrites_the_message_without_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    slack.refuse_blocks()
    text = "Streaming along, a stop refused, and the buttons refused too."
    stream, _ = await finished_by_update(start_tomo, slack, model, text)
    updates = slack.calls_to("chat.update")
    assert ["blocks" in update for update in updates] == [True, False]
    assert updates[-1]["markdown_text"] == text
    assert slack.blocks_of("C1", stream["ts"]) is None
    assert refusals(caplog) == 1
