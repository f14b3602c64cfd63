"""Guests and people of other organisations read less (docs/tools.md), through the signed
endpoint with the model stand-in's scripted calls of the real tools: a guest's DM finds that
DM and the guest's channels only; a Slack Connect channel (`channel_shared`) finds itself
only, until `channel_unshared`; a DM with a person of another organisation finds that DM
alone; a guest's important note stays where it was written. users.info, conversations.members
and users.conversations answer with Slack's fields (tests/fakes/slack_shapes.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.gate.standing import Standing, standing_of
from tests.conftest import StartTomo, later_ts, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.gate.test_scope_now import searched
from tests.tools.workspace import build, store

PUBLIC_WORD, DESIGN_WORD, SECRET_WORD = "zebracorn", "色見本", "秘密会議"


def guests(slack: FakeSlack) -> None:
    """Gwen (U5), a single-channel guest in #design (C5) with Alice; Otto (U9), of another
    organisation, in a DM with tomo; #partners (C6), Alice's, about to be shared; #secret
    (G1) is Alice's."""
    build(slack)
    slack.add_user("U5", name="gwen", display_name="Gwen", guest="single")
    slack.add_user("U9", name="otto", display_name="Otto", team_id="T9OTHER")
    slack.add_channel("C5", "design", members=("U5", "U1", "UBOT"))
    slack.add_channel("D5", "", is_im=True, user="U5")
    slack.add_channel("D9", "", is_im=True, user="U9")
    slack.add_channel("C6", "partners", members=("U1", "UBOT"))


async def seed(tomo: object) -> None:
    await store(tomo, "C1", f"the {PUBLIC_WORD} roadmap is ready")  # type: ignore[arg-type]
    await store(tomo, "C5", f"the {DESIGN_WORD} palette is final")  # type: ignore[arg-type]
    await store(tomo, "G1", f"the {SECRET_WORD} is on Friday")  # type: ignore[arg-type]


SEARCHES = [("search_messages", {"query": w}) for w in (PUBLIC_WORD, DESIGN_WORD, SECRET_WORD)]


async def test_a_guests_dm_shows_that_dm_and_the_guests_channels_only(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    guests(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60, LLM_FUNCTION_CALLING="true") as tomo:
        await seed(tomo)
        dm = {"channel": "D5", "user": "U5", "channel_type": "im"}
        public, design, secret = await searched(
            tomo, slack, model, SEARCHES, text="何か新しいことある?", **dm
        )
        listed = await searched(
            tomo, slack, model, [("search_messages", {"query": "", "channel": "#general"})], **dm
        )
    assert public == secret == "No messages found."
    assert DESIGN_WORD in design and "#design" in design
    assert listed == ["No messages found."]


async def test_a_slack_connect_channel_shows_itself_only_until_it_is_unshared(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    guests(slack)
    members = ("U1", "UBOT")
    async with start_tomo(MIN_WAIT_SECONDS=60, LLM_FUNCTION_CALLING="true") as tomo:
        await seed(tomo)
        await store(tomo, "C6", "the 提携先 contract")
        calls = [("search_messages", {"query": w}) for w in (PUBLIC_WORD, "提携先")]
        before = await searched(tomo, slack, model, calls, channel="C6")
        # docs.slack.dev/reference/events/channel_shared and channel_unshared
        slack.add_channel("C6", "partners", members=members, is_ext_shared=True)
        shared = {"type": "channel_shared", "connected_team_id": "E163Q94DX", "channel": "C6"}
        assert (await tomo.event(shared | {"event_ts": later_ts()})).status_code == 200
        during = await searched(tomo, slack, model, calls, channel="C6")
        slack.add_channel("C6", "partners", members=members)
        unshared = {
            "type": "channel_unshared",
            "previously_connected_team_id": "E163Q94DX",
            "channel": "C6",
            "is_ext_shared": False,
        }
        assert (await tomo.event(unshared | {"event_ts": later_ts()})).status_code == 200
        after = await searched(tomo, slack, model, calls, channel="C6")
        rows = await tomo.rows("SELECT is_ext_shared FROM channel WHERE id = 'C6'")
    assert PUBLIC_WORD in before[0] and "提携先" in before[1]
    assert during[0] == "No messages found." and "提携先" in during[1]
    assert PUBLIC_WORD in after[0] and "提携先" in after[1]
    assert rows == [{"is_ext_shared": False}]


async def test_a_dm_with_a_person_of_another_organisation_shows_that_dm_alone(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    guests(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60, LLM_FUNCTION_CALLING="true") as tomo:
        await seed(tomo)
        await store(tomo, "D9", "otto's quokkaplan", user="U9")
        calls = [*SEARCHES, ("search_messages", {"query": "quokkaplan"})]
        dm = {"channel": "D9", "user": "U9", "channel_type": "im"}
        found = await searched(tomo, slack, model, calls, text="what's new?", **dm)
    assert found[:3] == ["No messages found."] * 3
    assert "quokkaplan" in found[3]


@pytest.mark.parametrize(
    "text", ["the launch code name is Falcon", "打ち上げのコードネームはファルコン"]
)
async def test_a_guest_cannot_write_a_note_that_enters_other_conversations(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, text: str
) -> None:
    guests(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60, LLM_FUNCTION_CALLING="true") as tomo:
        note = {"text": text, "importance": 5}
        said = await searched(
            tomo, slack, model, [("note", note)], channel="C5", user="U5", text="<@UBOT> note it"
        )
        after = len(model.requests)
        await searched(tomo, slack, model, [], text="<@UBOT> hello")
        prompts = [
            str(r["messages"][0]["content"])
            for r in model.requests[after:]
            if purpose_of(r) == "reply"
        ]
        rows = await tomo.rows("SELECT conversation, scope FROM note")
    assert "only this conversation" in said[0]
    assert rows == [{"conversation": "C5", "scope": "conversation"}]
    assert prompts and not [p for p in prompts if text in p]


def person(team: str, *, guest: bool | None = False, org: str = "") -> SimpleNamespace:
    return SimpleNamespace(team_id=team, is_guest=guest, enterprise_id=org)


def test_a_person_of_another_workspace_of_the_same_organisation_is_no_outsider() -> None:
    """An `is_org_shared` channel's people: another team_id, the same Enterprise organisation."""
    ours = {"team_id": "T0001", "enterprise_id": "E1"}
    assert standing_of(person("T0002", org="E1"), **ours) is Standing.MEMBER
    assert standing_of(person("T0002", org="E2"), **ours) is Standing.OUTSIDER
    assert standing_of(person("T0002"), team_id="T0001", enterprise_id=None) is Standing.OUTSIDER
    assert standing_of(person("T0001", guest=True), **ours) is Standing.GUEST
    assert standing_of(person("T0001", guest=None), **ours) is Standing.UNKNOWN
    assert standing_of(None, **ours) is Standing.UNKNOWN
