"""Timers back after a restart (SPEC §3.9): the newest message owed an answer is the newest
turn of its conversation, whatever notes came after it."""

from __future__ import annotations

from typing import Any

from tests.conftest import StartTomo, judgment_json, next_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack


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
