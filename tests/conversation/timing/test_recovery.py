"""Timers back after a restart: the newest message owed an answer is the newest turn of its
conversation, whatever notes came after it, and a reply comes back for the reason it had."""

from __future__ import annotations

from typing import Any

from app.conversation.routing import route_message
from app.db.recorder import NewMessage
from app.slack.events import IncomingMessage, parse_event
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
        message = parse_event({"type": "event_callback", "team_id": "T0001", "event": event})
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
