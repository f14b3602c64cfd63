"""Who may see what, attacked: a private channel's unique words (English and Japanese, long and
two characters) searched and read from everywhere, by members and non-members; a DM's words
from every other conversation. Only what everyone reading the reply may read comes back."""

from __future__ import annotations

import pytest

from app.context.directory import _channel_row
from app.tools.read_thread import ReadThread
from app.tools.search_messages import NOTHING, SearchMessages
from tests.conftest import StartTomo, Tomo
from tests.fakes import FakeSlack
from tests.tools.kit import kit_of
from tests.tools.workspace import asker, build, store

SECRET_WORDS = ["zebracorn", "秘密会議", "予算"]
# Where the reply would go, and for whom; whether it may show #secret (G1, Alice's).
PLACES = [
    pytest.param("C1", "U1", False, id="public channel, asked by a member"),
    pytest.param("C1", None, False, id="public channel, tomo on its own"),
    pytest.param("D2", "U2", False, id="DM of a non-member"),
    pytest.param("D3", "U3", False, id="DM of someone in no private channel"),
    pytest.param("G2", "U2", False, id="another private channel"),
    pytest.param("G2", "U1", False, id="another private channel, asked by a member"),
    pytest.param("G3", "U1", False, id="group DM, asked by a member"),
    pytest.param("D1", "U1", True, id="DM of a member"),
    pytest.param("G1", "U1", True, id="the private channel itself"),
]


async def seeded(tomo: Tomo) -> dict[str, str]:
    parent = await store(tomo, "G1", "zebracorn: the 秘密会議 about the 予算 is on Friday")
    await store(tomo, "G1", "only members know", thread_ts=parent, ago=30)
    dm = await store(tomo, "D2", "bob's own quokkaplan 相談", user="U2")
    await store(tomo, "C1", "a public hello", ago=90)
    return {"parent": parent, "dm": dm}


@pytest.mark.parametrize(("channel", "user", "sees"), PLACES)
async def test_a_private_channels_words_reach_only_where_everyone_may_read_them(
    start_tomo: StartTomo, slack: FakeSlack, channel: str, user: str | None, sees: bool
) -> None:
    build(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        stamps = await seeded(tomo)
        kit = kit_of(tomo)
        search, read = SearchMessages(kit), ReadThread(kit)
        who = asker(channel, user)
        found = {w: await search.run({"query": w}, asker=who) for w in SECRET_WORDS}
        named = [
            await search.run({"query": "", "channel": name}, asker=who)
            for name in ("G1", "secret", "#secret", "<#G1|secret>")
        ]
        unknown = await search.run({"query": "", "channel": "#no-such-channel"}, asker=who)
        link = f"https://fake.slack.test/archives/G1/p{stamps['parent'].replace('.', '')}"
        thread = await read.run({"permalink": link}, asker=who)
        by_ts = await read.run({"channel": "G1", "ts": stamps["parent"]}, asker=who)
        dm_words = await search.run({"query": "quokkaplan"}, asker=who)
        dm_thread = await read.run({"channel": "D2", "ts": stamps["dm"]}, asker=who)
    for word, result in found.items():
        assert result.ok
        assert (word in result.text) is sees, (word, result.text)
    for result in (*named, thread, by_ts):
        assert ("zebracorn" in result.text) is sees, result.text
    if not sees:  # the same answer as for a channel that does not exist
        assert all(r.text == unknown.text == NOTHING for r in named)
        assert thread.text == by_ts.text and "zebracorn" not in thread.text
    else:
        assert "only members know" in thread.text and thread.sources == (link,)
    # Bob's DM: never from anywhere but itself.
    in_bobs_dm = channel == "D2"
    assert ("quokkaplan" in dm_words.text) is in_bobs_dm
    assert ("quokkaplan" in dm_thread.text) is in_bobs_dm


async def test_bobs_dm_is_found_in_bobs_dm_only(start_tomo: StartTomo, slack: FakeSlack) -> None:
    build(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await seeded(tomo)
        search = SearchMessages(kit_of(tomo))
        own = await search.run({"query": "quokkaplan"}, asker=asker("D2", "U2"))
        two = await search.run({"query": "相談"}, asker=asker("D2", "U2"))
        # Alice's DM, with Bob's user id claimed for it: the DM's scope is Alice's conversation.
        other = await search.run({"query": "quokkaplan"}, asker=asker("D1", "U1"))
    assert "quokkaplan" in own.text and "相談" in two.text
    assert other.text == NOTHING


async def test_membership_comes_from_slack_for_that_person(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    """The DM's scope asks users.conversations with the person's `user`: Alice's private
    conversations are #secret and the group DM, Bob's #other and the group DM."""
    build(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        scopes = kit_of(tomo).scopes
        alice = await scopes.for_asker(asker("D1", "U1"))
        bob = await scopes.for_asker(asker("D2", "U2"))
        carol = await scopes.for_asker(asker("D3", "U3"))
    asked = [p for p in slack.calls_to("users.conversations") if "user" in p]
    assert alice.private == {"G1", "G3", "D1"}
    assert bob.private == {"G2", "G3", "D2"}
    assert carol.private == {"D3"}
    assert {p["user"] for p in asked} == {"U1", "U2", "U3"}


def test_a_group_dm_is_never_public_whatever_its_is_private_says() -> None:
    """The scope's public channels are the Channel rows neither private nor DMs: a group DM
    (or a legacy private channel) listed without is_private must not become one."""
    for shape in ({"is_mpim": True}, {"is_group": True}, {"is_mpim": True, "is_private": False}):
        assert _channel_row({"id": "G9", "name": "mpdm-a--b-1", **shape}, 0.0)["is_private"]
    assert not _channel_row({"id": "C9", "name": "general", "is_channel": True}, 0.0)["is_private"]
