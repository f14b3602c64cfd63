"""Replies that appear as they are written (docs/how-tomo-works.md#streaming), through the signed
endpoint: the real slack-sdk chat-stream helper against the Slack stand-in's chat.startStream,
chat.appendStream and chat.stopStream; real LiteLLM reading the model stand-in's server-sent
events."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from app.conversation.claims.taking import Claim
from app.conversation.reply.posting import EVENT_TYPE
from app.conversation.reply.streaming import StreamedReplies
from app.conversation.reply.words import apology
from app.domain import ReplyReason
from app.slack.mrkdwn import ZWSP, format_reply
from tests.conftest import StartTomo, Tomo, judgment_json, next_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack

STREAM = {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30}
PINGS = ("<!channel>", "<!here>", "<!everyone>", "<!subteam^S1>")


async def mention(tomo: Tomo, text: str = "<@UBOT> tell me a story") -> str:
    ts = next_ts()
    tomo.slack.add_message("C1", ts=ts, text=text, user="U1")
    return await tomo.message(text, ts=ts)


async def claim_reaches(tomo: Tomo, status: str) -> None:
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status = :s", s=status),
        timeout=20,
        what=f"a claim {status}",
    )


async def finished(tomo: Tomo, n: int = 1) -> list[dict[str, Any]]:
    """Wait for `n` streamed messages and the claim to end; the streams."""
    await wait_for(
        lambda: len([s for s in tomo.slack.streams() if s["state"] != "in_progress"]) >= n,
        timeout=20,
        what=f"{n} finished stream(s)",
    )
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM reply WHERE status IN ('posted', 'failed')"),
        timeout=20,
        what="the finished claim",
    )
    return tomo.slack.streams()


async def test_a_mention_is_streamed_into_its_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.pace.every, model.pace.size = 0.05, 6
    model.enqueue("Once upon a time, a small robot learnt to listen. The end.")
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        (stream,) = await finished(tomo)
        (claim,) = await tomo.rows("SELECT * FROM reply")
        stored = await tomo.rows("SELECT ts, text FROM message WHERE user_id = 'UBOT'")
    assert stream["thread_ts"] == asked and stream["channel"] == "C1"
    assert stream["recipient_user_id"] == "U1" and stream["recipient_team_id"] == "T0001"
    assert stream["text"] == "Once upon a time, a small robot learnt to listen. The end."
    assert stream["state"] == "completed" and stream["appends"] >= 2  # written in pieces
    assert slack.posts() == []  # nothing posted whole
    assert model.last_request.get("stream") is True
    assert claim["status"] == "posted" and claim["posted_ts"] == stream["ts"]
    assert stored == [{"ts": stream["ts"], "text": stream["text"]}]
    (message,) = slack.bot_messages("C1")
    assert message["metadata"]["event_type"] == EVENT_TYPE  # found again like a post
    # "On it" (the thread's status) ends with the first words, not at the end.
    signs = [
        (m, p.get("status"))
        for m, p in slack.calls
        if m in ("assistant.threads.setStatus", "chat.startStream", "chat.stopStream")
    ]
    assert signs[:3] == [
        ("assistant.threads.setStatus", "is thinking…"),
        ("chat.startStream", None),
        ("assistant.threads.setStatus", ""),
    ]
    assert signs.index(("chat.stopStream", None)) > 2
    assert message["metadata"]["event_payload"]["claim"] == claim["id"]


async def test_a_direct_message_is_streamed_at_its_top_level(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    model.pace.every, model.pace.size = 0.2, 4
    model.enqueue("Hello! I'm here.")
    ts = next_ts()
    slack.add_message("D1", ts=ts, text="hi tomo", user="U1")
    async with start_tomo(**STREAM) as tomo:
        await tomo.message("hi tomo", channel="D1", channel_type="im", ts=ts)
        (stream,) = await finished(tomo)
    assert stream["channel"] == "D1" and stream["thread_ts"] is None
    assert stream["text"] == "Hello! I'm here." and slack.posts() == []
    start = slack.calls_to("chat.startStream")[0]
    assert "thread_ts" not in start  # the top level: Slack's reference makes it optional
    # "On it" (an :eyes: reaction here) ends when the first words appear, not at the end.
    methods = [m for m, _ in slack.calls if m.startswith(("reactions.", "chat."))]
    assert methods[:3] == ["reactions.add", "chat.startStream", "reactions.remove"]
    assert methods.index("reactions.remove") < methods.index("chat.stopStream")
    assert slack.reactions("D1", ts) == []


async def test_a_reply_tomo_makes_on_its_own_is_posted_whole(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment_json(True) if purpose_of(request) == "judgment" else "I can help!"

    model.responder = responder
    async with start_tomo(**STREAM, MIN_WAIT_SECONDS=0.2) as tomo:
        await tomo.message("does anyone know how to bake bread?")
        (post,) = await slack.wait_for_posts(1, timeout=20)
    assert post["text"] == "I can help!" and slack.streams() == []
    assert not slack.calls_to("chat.startStream")


@pytest.mark.parametrize("refusal", ["unknown_method", "not_allowed_token_type"])
async def test_where_slack_refuses_streaming_the_reply_is_posted_whole_and_logged_once(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    refusal: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    slack.fail("chat.startStream", error=refusal, times=5)
    model.enqueue("first answer", "second answer")
    caplog.set_level(logging.WARNING, logger="app.conversation.reply.streaming")
    async with start_tomo(**STREAM) as tomo:
        first = await mention(tomo, "<@UBOT> one")
        await slack.wait_for_posts(1, timeout=20)
        second = await mention(tomo, "<@UBOT> two")
        await slack.wait_for_posts(2, timeout=20)
    posts = slack.posts()
    assert [(p["thread_ts"], p["text"]) for p in posts] == [
        (first, "first answer"),
        (second, "second answer"),
    ]
    assert len(slack.calls_to("chat.startStream")) == 1  # not asked again
    assert slack.streams() == []
    refusals = [r for r in caplog.records if "refused to stream" in r.getMessage()]
    assert len(refusals) == 1


async def test_a_ping_split_across_pieces_never_reaches_slack(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    pieces = ["Hey <!chan", "nel> and <", "!here|@here> and @ev", "eryone, ", "hi"]
    model.enqueue({"chunks": pieces})
    async with start_tomo(**STREAM) as tomo:
        await mention(tomo)
        (stream,) = await finished(tomo)
    sent = [c for m, c in slack.calls if m.startswith("chat.")]
    for params in sent:
        text = str(params)
        assert not any(ping in text for ping in PINGS), params
        assert "@everyone" not in text and "@here" not in text.replace(f"@{ZWSP}here", "")
    assert stream["text"].replace(ZWSP, "") == "Hey @channel and @here and @everyone, hi"


async def test_a_reply_longer_than_one_message_continues_in_the_next(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    paragraph = "word " * 199 + "end.\n"  # 1,000 characters
    model.pace.size = 700
    model.enqueue(paragraph * 14)
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        streams = await finished(tomo, 2)
        (claim,) = await tomo.rows("SELECT status FROM reply")
    assert len(streams) == 2 and all(s["thread_ts"] == asked for s in streams)
    assert all(len(s["text"]) <= 12_000 for s in streams)
    assert " ".join(s["text"] for s in streams).split() == (paragraph * 14).split()
    chunks = [m["metadata"]["event_payload"]["chunk"] for m in slack.bot_messages("C1")]
    assert chunks == [0, 1] and claim["status"] == "posted"


async def test_a_model_failing_mid_stream_leaves_a_finished_message_with_a_note(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue({"chunks": ["The answer is ", "forty", "-two"], "fail_after": 2})
    async with start_tomo(**STREAM) as tomo:
        await mention(tomo)
        (stream,) = await finished(tomo)
        (claim,) = await tomo.rows("SELECT status, error FROM reply")
    assert stream["state"] == "completed"
    assert stream["text"].startswith("The answer is forty")
    assert "please ask again" in stream["text"] and slack.posts() == []
    assert claim["status"] == "failed" and claim["error"]


async def test_a_start_answered_500_after_slack_stored_it_is_found_not_started_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.fail("chat.startStream", status=500, accept=True)
    model.pace.every, model.pace.size = 0.05, 5
    model.enqueue("one two three four five six seven")
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        (stream,) = await finished(tomo)
        (claim,) = await tomo.rows("SELECT status, posted_ts FROM reply")
    assert len(slack.calls_to("chat.startStream")) == 1
    assert stream["thread_ts"] == asked and stream["text"] == "one two three four five six seven"
    assert claim == {"status": "posted", "posted_ts": stream["ts"]}
    assert len(slack.bot_messages("C1")) == 1 and slack.posts() == []


async def test_a_stream_left_open_by_a_cancelled_job_is_finished_in_the_same_message(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.pace.every, model.pace.size = 0.3, 4
    model.enqueue("a long and slow answer that is cut off", "the whole answer, written again")
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        await wait_for(lambda: slack.streams(), timeout=20, what="the stream started")
        running = tomo.memory_timers.running_jobs
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    (left,) = slack.streams()
    assert left["state"] == "in_progress"
    slack.expire_streams()  # Slack gave up on it meanwhile: chat.update finishes it

    async with start_tomo(**STREAM) as tomo:
        await claim_reaches(tomo, "posted")
    (stream,) = slack.streams()
    assert stream["ts"] == left["ts"] and stream["thread_ts"] == asked
    assert stream["text"] == "the whole answer, written again" and stream["updated"]
    assert slack.posts() == [] and len(slack.bot_messages("C1")) == 1
    # The reply's last message, rewritten whole, ends with the feedback buttons.
    markdown, buttons = slack.blocks_of("C1", stream["ts"]) or []
    assert markdown == {"type": "markdown", "text": "the whole answer, written again"}
    assert buttons["type"] == "context_actions"


async def test_an_auto_reply_channel_message_is_streamed_into_its_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("Happy to help with that.")
    async with start_tomo(**STREAM, AUTO_REPLY_CHANNELS="C2") as tomo:
        ts = next_ts()
        slack.add_message("C2", ts=ts, text="how do I reset my password?", user="U2")
        await tomo.message("how do I reset my password?", channel="C2", user="U2", ts=ts)
        (stream,) = await finished(tomo)
    assert stream["channel"] == "C2" and stream["thread_ts"] == ts
    assert stream["recipient_user_id"] == "U2" and stream["text"] == "Happy to help with that."


async def test_a_model_failing_before_its_first_words_gets_the_apology_posted(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.fail(status=500)
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        (post,) = await slack.wait_for_posts(1, timeout=20)
    assert post["thread_ts"] == asked and post["text"] == format_reply(apology("en"))[0]
    assert slack.streams() == []


async def test_an_unsettled_start_is_looked_up_after_a_restart_not_started_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Slack stored the start but answered 500, and tomo could not look it up before it
    stopped: the next life finds that message and finishes it."""
    slack.fail("chat.startStream", status=500, accept=True)
    slack.fail("conversations.replies", status=500, times=50)
    model.pace.every, model.pace.size = 0.05, 5
    model.enqueue("the first words of an answer", "the answer, written again")
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        await claim_reaches(tomo, "uncertain")
        # The model's answer, left unread once Slack failed, is recorded all the same.
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM llm_call WHERE error LIKE '%left unread%'"),
            timeout=10,
            what="the abandoned call recorded",
        )
    (left,) = slack.streams()
    assert left["state"] == "in_progress"
    slack.heal()

    async with start_tomo(**STREAM) as tomo:
        await claim_reaches(tomo, "posted")
    (stream,) = slack.streams()
    assert stream["ts"] == left["ts"] and stream["thread_ts"] == asked
    assert stream["text"] == "the answer, written again" and stream["state"] != "in_progress"
    assert len(slack.calls_to("chat.startStream")) == 1 and slack.posts() == []
    assert len(slack.bot_messages("C1")) == 1


def test_govslack_is_never_asked_to_stream(caplog: pytest.LogCaptureFixture) -> None:
    claim = Claim(1, "C1", "1.0", "1.0", ReplyReason.MENTION)
    parts: dict[str, Any] = {"slack": None, "engine": None, "poster": None, "loop": None}
    gov = StreamedReplies(enabled=True, api_url="https://slack-gov.com/api/", **parts)
    commercial = StreamedReplies(enabled=True, api_url="https://slack.com/api/", **parts)
    assert not gov.wanted(claim) and commercial.wanted(claim)
    assert "GovSlack" in caplog.text


async def test_a_later_part_refused_is_finished_later_never_posted_twice(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Slack took the first message of a long reply but refuses to start the second: the
    claim stays owed; the next life finishes the first message with the reply written again,
    and posts nothing twice."""
    starts: list[dict[str, Any]] = []

    def second_refused(params: dict[str, Any]) -> dict[str, Any]:
        starts.append(params)
        if len(starts) == 2:
            return {"ok": False, "error": "restricted_action"}
        return slack.answer_stream("chat.startStream", params)

    slack.handle("chat.startStream", second_refused)
    model.pace.size = 4000
    model.enqueue(("word " * 199 + "end.\n") * 14, "a shorter answer, written again")
    async with start_tomo(**STREAM) as tomo:
        asked = await mention(tomo)
        await claim_reaches(tomo, "uncertain")
    (first,) = slack.streams()
    assert first["state"] == "completed" and slack.posts() == []

    async with start_tomo(**STREAM) as tomo:
        await claim_reaches(tomo, "posted")
    (stream,) = slack.streams()
    assert stream["ts"] == first["ts"] and stream["thread_ts"] == asked
    assert stream["text"] == "a shorter answer, written again" and stream["updated"]
    assert len(slack.bot_messages("C1")) == 1 and slack.posts() == []
