"""Messages stored from the Web API (a joined channel's history, a thread's replies): one bad
value never keeps the others out."""

from __future__ import annotations

from tests.conftest import StartTomo, next_ts, wait_for
from tests.fakes import FakeSlack


async def test_a_nul_in_history_never_keeps_the_rest_out(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("C9", "newroom")
    texts = ["before", "a nul \x00 here", "after"]
    for text in texts:
        slack.add_message("C9", ts=next_ts(), text=text, user="U1")
    async with start_tomo() as tomo:
        # member_joined_channel for the bot (api.slack.com/events/member_joined_channel).
        joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C9", "team": "T0001"}
        assert (await tomo.event(joined)).status_code == 200

        async def fetched() -> list[str]:
            rows = await tomo.rows("SELECT text FROM message WHERE channel = 'C9' ORDER BY ts")
            return [r["text"] for r in rows]

        await wait_for(fetched, what="the joined channel's history")
        stored = await fetched()
    assert stored == ["before", "a nul  here", "after"]
