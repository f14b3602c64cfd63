"""A person's message that comes while tomo writes a reply (docs/how-tomo-works.md#reply): the
reply answers what its prompt held, the message that came meanwhile is answered next, and
nothing is answered twice. Through the signed endpoint, with the reply posted whole, with a
stream Slack refuses (then posted whole), and streamed; in English and in Japanese.

The model stand-in holds its first answer until the second message is acknowledged: a message
sent while the model writes has an earlier ts than tomo's post, which Slack stamps when it is
made (the Slack stand-in stamps posts and streams with the time, after every message it has).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.conftest import (
    StartTomo,
    Tomo,
    judgment_json,
    next_ts,
    purpose_of,
    turns_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack

MODES: dict[str, dict[str, Any]] = {
    "whole": {"STREAM_REPLIES": "false"},
    "refused": {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30},
    "streamed": {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30},
}
# (first question, second question, answer to the first, answer to the second)
WORDS = {
    "en": (
        "what is on the agenda today?",
        "and who is coming?",
        "Today: the release plan.",
        "Aiko and Ben are coming.",
    ),
    "ja": (
        "今日の議題は何ですか?",
        "誰が来ますか?",
        "今日はリリース計画です。",
        "愛子さんとベンさんが来ます。",
    ),
}
# Where the two messages are written, and why each is answered: two mentions in a thread; two
# DMs at the DM's top level; two messages in an AUTO_REPLY_CHANNELS channel (the second in the
# first's thread); a mention, then a message in its thread without one (a follow-up, judged).
WHERE = {
    "mention": ("mention", "mention"),
    "dm": ("dm", "dm"),
    "auto_reply": ("auto_reply", "auto_reply"),
    "follow_up": ("mention", "follow_up"),
}


def answer_each_question(model: FakeModel, words: tuple[str, str, str, str]) -> None:
    """A reply whose prompt ends with the first question answers it, and the same for the
    second; a judgment says to answer."""
    first, second, first_answer, second_answer = words

    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) == "judgment":  # a follow-up's: tomo is spoken to
            return judgment_json(True)
        newest = str(turns_of(request)[-1]["content"])
        if newest.endswith(first):
            return first_answer
        if newest.endswith(second):
            return second_answer
        return f"unexpected prompt ending with {newest!r}"

    model.responder = responder


async def say(tomo: Tomo, text: str, *, reason: str, thread_ts: str | None = None) -> str:
    """A person's message, in Slack and delivered as an event: in the DM D1 at its top level,
    else in C1 (in the first message's thread), with a mention where `reason` says so."""
    ts = next_ts()
    if reason == "dm":
        tomo.slack.add_message("D1", ts=ts, text=text, user="U1")
        return await tomo.message(text, channel="D1", channel_type="im", ts=ts)
    text = f"<@UBOT> {text}" if reason == "mention" else text
    tomo.slack.add_message("C1", ts=ts, text=text, user="U1", thread_ts=thread_ts)
    return await tomo.message(text, ts=ts, thread_ts=thread_ts)


def answers(slack: FakeSlack, channel: str) -> list[dict[str, Any]]:
    """tomo's messages in `channel`, posted or streamed, oldest first."""
    return slack.bot_messages(channel)


async def settled(tomo: Tomo, n: int) -> list[dict[str, Any]]:
    """Wait for `n` claims that are finished, and none still being written; the claims."""

    async def done() -> bool:
        rows = await tomo.rows("SELECT status FROM reply")
        return len(rows) >= n and all(r["status"] in ("posted", "failed") for r in rows)

    await wait_for(done, timeout=30, what=f"{n} settled claims")
    return await tomo.rows("SELECT * FROM reply ORDER BY id")


@pytest.mark.parametrize("language", sorted(WORDS))
@pytest.mark.parametrize("where", sorted(WHERE))
@pytest.mark.parametrize("mode", sorted(MODES))
async def test_a_message_sent_while_tomo_writes_is_answered_next_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, mode: str, where: str, language: str
) -> None:
    words, reasons = WORDS[language], WHERE[where]
    answer_each_question(model, words)
    release = threading.Event()
    model.hold(lambda n, _request: 0.0 if n > 0 or release.is_set() else 1.0)
    if mode == "refused":
        slack.fail("chat.startStream", error="not_allowed_token_type", times=5)
    slack.add_channel("D1", "", is_im=True, user="U1")
    channel = "D1" if where == "dm" else "C1"
    settings = {**MODES[mode], "FOLLOW_UP_WAIT_SECONDS": 0.1}
    if where == "auto_reply":
        settings["AUTO_REPLY_CHANNELS"] = "C1"
    async with start_tomo(**settings) as tomo:
        first = await say(tomo, words[0], reason=reasons[0])
        await model.wait_for_requests(1, timeout=30)  # the first reply is being written
        thread = None if where == "dm" else first
        second = await say(tomo, words[1], reason=reasons[1], thread_ts=thread)  # acknowledged
        release.set()
        await wait_for(lambda: len(answers(slack, channel)) >= 2, timeout=30, what="two answers")
        claims = await settled(tomo, 2)
        # The reply jobs of both messages again (a timer run twice, a second process): both
        # messages were in a prompt already, so nothing more is written or posted.
        for latest, reason in zip((first, second), reasons, strict=True):
            again = await tomo.runtime.reply.run(
                channel=channel, thread_ts=thread or "", latest_ts=latest, reason=reason
            )
            assert again == []
        posted = answers(slack, channel)
    assert [m["text"] for m in posted] == [words[2], words[3]]
    assert [(c["trigger_ts"], c["reason"]) for c in claims] == [
        (first, reasons[0]),
        (second, reasons[1]),
    ]
    assert [c["status"] for c in claims] == ["posted", "posted"]
    assert posted[0]["ts"] > second  # tomo's first post came after the second message
    if where != "dm":
        assert [m.get("thread_ts") for m in posted] == [first, first]
    requests = [r for r in model.requests if purpose_of(r) == "reply"]
    assert len(requests) == 2
    # The second prompt shows tomo's first answer before the second message, which ends it.
    turns = turns_of(requests[1])
    assert turns[-1]["role"] == "user" and str(turns[-1]["content"]).endswith(words[1])
    assert turns[-2] == {"role": "assistant", "content": words[2]}
    if mode == "streamed":
        assert len(slack.streams()) == 2 and slack.posts() == []
    else:
        assert len(slack.posts()) == 2 and slack.streams() == []


@pytest.mark.parametrize("language", sorted(WORDS))
async def test_a_message_sent_while_tomo_wrote_is_answered_after_a_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, language: str
) -> None:
    """tomo stops after posting its first answer, before the second mention's reply ran: the
    next start finds the second mention owed (tomo's later post did not answer it), answers
    it, and answers nothing twice."""
    words = WORDS[language]
    answer_each_question(model, words)
    release = threading.Event()
    model.hold(lambda n, _request: 0.0 if n > 0 or release.is_set() else 1.0)
    async with start_tomo() as tomo:
        first = await say(tomo, words[0], reason="mention")
        await model.wait_for_requests(1, timeout=30)
        tomo.memory_timers.scheduler.pause()  # the second mention's reply never runs here
        second = await say(tomo, words[1], reason="mention", thread_ts=first)
        release.set()
        await settled(tomo, 1)
    assert [m["text"] for m in answers(slack, "C1")] == [words[2]]
    async with start_tomo() as tomo:
        await wait_for(lambda: len(answers(slack, "C1")) >= 2, timeout=30, what="the second")
        claims = await settled(tomo, 2)
        assert await tomo.runtime.restore_timers() == 0  # nothing is owed any more
    assert [m["text"] for m in answers(slack, "C1")] == [words[2], words[3]]
    assert [c["trigger_ts"] for c in claims] == [first, second]
    assert len([r for r in model.requests if purpose_of(r) == "reply"]) == 2
