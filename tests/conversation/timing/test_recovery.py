"""Timers back after a restart: the newest message owed an answer is the newest turn of its
conversation, whatever notes came after it, and a reply comes back for the reason it had."""

from __future__ import annotations

from typing import Any

from app.conversation.routing import route_message
from app.conversation.timing.recovery import OwedJudgment, OwedReply, Stored, owed, skipped
from app.db.models import Judgment, Message, Reply
from app.domain import ReplyReason
from app.recording.recorder import NewMessage
from app.slack.callbacks import parse_event
from app.slack.envelope import read_envelope
from app.slack.events import IncomingMessage
from tests.conftest import StartTomo, judgment_json, next_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command


async def test_a_join_after_the_question_does_not_hide_it_from_recovery(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    def answer(request: dict[str, Any]) -> str:
        return judgment_json(False) if purpose_of(request) == "judgment" else "hi"

    model.responder = answer
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        question = await tomo.message("anyone know a good ramen place near the office?")
        joined = next_ts()
        join = {
            "type": "message",
            "subtype": "channel_join",
            "user": "U2",
            "text": "<@U2> has joined the channel",
            "inviter": "U1",
            "ts": joined,
            "event_ts": joined,
            "channel": "C1",
            "channel_type": "channel",
        }
        assert (await tomo.event(join)).status_code == 200
    async with start_tomo(MIN_WAIT_SECONDS=0.05) as tomo:

        async def judged() -> bool:
            return bool(await tomo.rows("SELECT 1 FROM judgment"))

        await wait_for(judged, what="the restored judgment")
        decisions = await tomo.rows("SELECT latest_ts FROM judgment")
    assert decisions == [{"latest_ts": question}]


async def test_an_auto_reply_owed_at_a_restart_stays_an_auto_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    """A message of an AUTO_REPLY_CHANNELS channel recorded just before tomo died (its timer
    lost with the process) comes back as an auto-reply: the channel's quiet mode holds it
    back, and no "on it" sign goes up (it is no mention)."""
    model.responder = lambda request: "hello"
    ts = next_ts()
    async with start_tomo(AUTO_REPLY_CHANNELS="C2") as tomo:
        await run_command(tomo, "quiet", channel="C2", response_url=hooks.new_url())
        event = {
            "type": "message",
            "channel": "C2",
            "user": "U1",
            "text": "good morning, everyone",
            "ts": ts,
            "event_ts": ts,
            "channel_type": "channel",
        }
        envelope = {"type": "event_callback", "team_id": "T0001", "event": event}
        message = parse_event(read_envelope(envelope))
        assert isinstance(message, IncomingMessage)
        route = route_message(message, bot_user_id="UBOT", auto_reply_channels=frozenset({"C2"}))
        # Recorded, and the process gone before its timer fired: only the database knows.
        await tomo.runtime.recorder.record(event_id="Ev0AUTO", change=NewMessage(message, route))
    calls_before = len(slack.calls)
    async with start_tomo(AUTO_REPLY_CHANNELS="C2") as tomo:

        async def settled() -> bool:
            return bool(await tomo.rows("SELECT 1 FROM reply"))

        await wait_for(settled, what="the restored reply settled")
        claims = await tomo.rows("SELECT trigger_ts, reason, status FROM reply")
    assert claims == [{"trigger_ts": ts, "reason": "auto_reply", "status": "withheld"}]
    assert slack.posts() == [] and model.requests == []
    signs = {"assistant.threads.setStatus", "reactions.add"}
    assert not [method for method, _ in slack.calls[calls_before:] if method in signs]


def _stored_message(route: str, *, ts: str = "1700000100.000100", **fields: Any) -> Message:
    return Message(
        channel="C1",
        ts=ts,
        conversation_ts="",
        route=route,
        created_at=float(ts),
        text="hi",
        **fields,
    )


def test_what_a_newest_turn_is_owed_follows_its_route_and_its_judgment() -> None:
    """The steps of restore_timers: a reply now for its reason; a judgment after its wait (a
    follow-up's shorter) until one was made; then the reply it decided on, or nothing."""
    now, waits = 1700000200.0, {"min_wait": 60.0, "follow_up_wait": 5.0}
    asked = _stored_message("reply", channel_type="im")
    assert owed(asked, None, now=now, **waits) == OwedReply("C1", "", asked.ts, now, ReplyReason.DM)
    said = _stored_message("judgment")
    assert owed(said, None, now=now, **waits) == OwedJudgment(
        "C1", "", said.ts, max(now, said.created_at + 60.0), False
    )
    later = _stored_message("follow_up", ts="1700000199.000100")
    assert owed(later, None, now=now, **waits) == OwedJudgment(
        "C1", "", later.ts, later.created_at + 5.0, True
    )
    speak = Judgment(
        channel="C1", latest_ts=said.ts, should_respond=True, reply_at=now + 3, follow_up=True
    )
    assert owed(said, speak, now=now, **waits) == OwedReply(
        "C1", "", said.ts, now + 3, ReplyReason.FOLLOW_UP
    )
    silent = Judgment(channel="C1", latest_ts=said.ts, should_respond=False)
    assert owed(said, silent, now=now, **waits) is None
    assert owed(_stored_message("record"), None, now=now, **waits) is None


def test_a_turn_answered_or_held_by_a_reply_is_owed_nothing() -> None:
    first, second = _stored_message("judgment"), _stored_message("judgment", ts="1700000150.1")
    answered = Reply(channel="C1", thread_ts="", trigger_ts=first.ts, status="posted")
    stored = Stored(newest={}, judged={}, replies=[answered])
    assert skipped(first, stored) == "answered"
    assert skipped(second, stored) is None  # came after the reply's message
    # An owed claim neither answers nor holds its message.
    cut_short = Reply(channel="C1", thread_ts="", trigger_ts=second.ts, status="interrupted")
    assert skipped(second, Stored(newest={}, judged={}, replies=[cut_short])) is None
    # A reply to a later message held the earlier one in its prompt.
    later = Reply(channel="C1", thread_ts="", trigger_ts="1700000160.1", status="posted")
    assert skipped(second, Stored(newest={}, judged={}, replies=[later])) == (
        "held by a reply's prompt"
    )
