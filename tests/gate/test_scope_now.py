"""Who may see what follows Slack now, not an hour ago (docs/tools.md): through the signed
endpoint, a channel made private (Slack's `channel_convert_to_private` message) is private at
the next tool call and public again after `channel_convert_to_public`; a person removed from
a private channel (`member_left_channel`) no longer finds it from their DM; a note written in
a channel since made private stays there."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import StartTomo, Tomo, later_ts, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.gate.endpoint import SETTINGS, ask, script, tool_results
from tests.tools.workspace import build, store

WORDS = [pytest.param("moonbeamplan", id="English"), pytest.param("新製品計画", id="Japanese")]

# The messages Slack posts in the channel (docs.slack.dev/reference/events/message/
# channel_convert_to_private and channel_convert_to_public: subtype, user, text, channel_type).
MADE_PRIVATE = "made this channel *private*. Now, it can only be viewed or joined by invitation."
MADE_PUBLIC = "made this channel *public*. Any member in this workspace can see and join it."


async def convert(tomo: Tomo, slack: FakeSlack, channel: str, *, private: bool) -> None:
    name = "plans"
    slack.add_channel(channel, name, is_private=private, members=("U1", "UBOT"))
    await tomo.message(
        MADE_PRIVATE if private else MADE_PUBLIC,
        channel=channel,
        subtype="channel_convert_to_private" if private else "channel_convert_to_public",
        channel_type="group" if private else "channel",
        ts=later_ts(),
    )


async def searched(
    tomo: Tomo,
    slack: FakeSlack,
    model: FakeModel,
    calls: list[tuple[str, dict[str, Any]]],
    **ask_args: Any,
) -> list[str]:
    """One mention whose model makes these calls; what they gave back."""
    after = len(model.requests)
    script(model, calls)
    replies = int((await tomo.rows("SELECT count(*) AS n FROM reply"))[0]["n"]) + 1
    await ask(
        tomo, slack, ask_args.pop("text", "<@UBOT> anything about it?"), replies=replies, **ask_args
    )
    return tool_results(model, after=after)


@pytest.mark.parametrize("word", WORDS)
async def test_a_channel_made_private_is_private_at_the_next_tool_call_and_public_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, word: str
) -> None:
    slack.add_channel("C3", "plans", members=("U1", "UBOT"))
    async with start_tomo(**SETTINGS) as tomo:
        said = await store(tomo, "C3", f"the {word} ships in May")
        calls = [
            ("search_messages", {"query": word}),
            ("read_thread", {"channel": "C3", "ts": said}),
            ("search_messages", {"query": "", "channel": "#plans"}),
        ]
        public = await searched(tomo, slack, model, calls)
        await convert(tomo, slack, "C3", private=True)
        private = await searched(tomo, slack, model, calls)
        # Alice is in #plans: from her DM it is hers to see.
        in_dm = await searched(
            tomo, slack, model, calls[:1], channel="D1", channel_type="im", text="found it?"
        )
        await convert(tomo, slack, "C3", private=False)
        again = await searched(tomo, slack, model, calls)
    assert all(word in result for result in public), public
    assert not any(word in result for result in private), private
    assert private == ["No messages found.", "No thread found there.", "No messages found."]
    assert word in in_dm[0]
    assert all(word in result for result in again), again


async def test_a_person_removed_from_a_private_channel_no_longer_finds_it_from_their_dm(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    build(slack)  # Alice (U1) is in #secret (G1)
    async with start_tomo(**SETTINGS) as tomo:
        await store(tomo, "G1", "the 秘密会議 is on Friday")
        calls = [("search_messages", {"query": "秘密会議"})]
        dm = {"channel": "D1", "channel_type": "im", "text": "when is the meeting?"}
        member = await searched(tomo, slack, model, calls, **dm)
        slack.set_members("G1", ("UBOT",))
        left = {"type": "member_left_channel", "user": "U1", "channel": "G1"}
        event = await tomo.event(left | {"channel_type": "G", "team": "T0001"})
        assert event.status_code == 200
        removed = await searched(tomo, slack, model, calls, **dm)
    assert "Friday" in member[0]
    assert removed == ["No messages found."]


async def test_a_note_written_in_a_channel_made_private_stays_there(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("C3", "plans", members=("U1", "UBOT"))
    async with start_tomo(**SETTINGS) as tomo:
        note = {"text": "the launch code name is Falcon / 打ち上げはファルコン", "importance": 5}
        await searched(tomo, slack, model, [("note", note)], channel="C3")
        await convert(tomo, slack, "C3", private=True)
        after = len(model.requests)
        await searched(tomo, slack, model, [], text="<@UBOT> hello")
        await searched(tomo, slack, model, [], channel="C3", text="<@UBOT> and here?")
        prompts = [
            str(r["messages"][0]["content"])
            for r in model.requests[after:]
            if purpose_of(r) == "reply"
        ]
        rows = await tomo.rows("SELECT conversation, scope FROM note")
    assert rows == [{"conversation": "C3", "scope": "workspace"}]  # written while public
    elsewhere = [p for p in prompts if "Falcon" in p]
    assert len(elsewhere) == 1 and "#plans" in elsewhere[0], prompts
