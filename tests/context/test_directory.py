"""Channels and people (docs/how-tomo-works.md#channels-and-people) and the bot's identity, over
real HTTP to the Slack stand-in."""

import asyncio
from typing import Any

import pytest

from tests.conftest import StartTomo, next_ts, wait_for
from tests.fakes import FakeSlack


async def test_every_page_of_the_bots_channels_is_recorded(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    for n in range(450):  # users.conversations pages at 200 per call
        slack.add_channel(f"CX{n:04d}", f"room-{n}", is_private=n % 2 == 0)
    async with start_tomo() as tomo:
        await wait_for(lambda: len(slack.calls_to("users.conversations")) >= 3, what="three pages")

        async def all_stored() -> bool:
            rows = await tomo.rows("SELECT count(*) AS n FROM channel")
            return rows[0]["n"] == 452

        await wait_for(all_stored, what="every channel stored")
        names = await tomo.rows("SELECT id, name, is_private FROM channel WHERE id = 'CX0449'")
    assert names == [{"id": "CX0449", "name": "room-449", "is_private": False}]


async def test_display_names_are_fetched_once_and_cached(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        for _ in range(3):
            await tomo.message("hi", user="U2")

        async def stored() -> bool:
            return bool(await tomo.rows("SELECT * FROM person WHERE id = 'U2'"))

        await wait_for(stored, what="Bob's name")
        person = (await tomo.rows("SELECT display_name, name FROM person WHERE id = 'U2'"))[0]
    assert person == {"display_name": "Bob", "name": "bob"}
    assert [c["user"] for c in slack.calls_to("users.info")] == ["U2"]


async def test_joining_a_channel_fetches_its_recent_history(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("C9", "newroom")
    older = [next_ts() for _ in range(3)]
    for n, ts in enumerate(older):
        slack.add_message("C9", ts=ts, text=f"before I came {n}", user="U1")
    async with start_tomo() as tomo:
        joined = {
            "type": "member_joined_channel",
            "user": "UBOT",
            "channel": "C9",
            "channel_type": "C",
            "team": "T0001",
        }
        someone_else = {**joined, "user": "U2", "channel": "C2"}
        assert (await tomo.event(someone_else)).status_code == 200
        assert (await tomo.event(joined)).status_code == 200

        async def fetched() -> bool:
            rows = await tomo.rows("SELECT count(*) AS n FROM message WHERE channel = 'C9'")
            return rows[0]["n"] == 3

        await wait_for(fetched, what="the joined channel's history")
        rows = await tomo.rows("SELECT route, text FROM message WHERE channel = 'C9' ORDER BY ts")
        await asyncio.sleep(0.1)
        jobs = await tomo.runtime.timers.list()
    assert [r["text"] for r in rows] == [f"before I came {n}" for n in range(3)]
    assert {r["route"] for r in rows} == {"record"}  # history triggers nothing
    assert [c["channel"] for c in slack.calls_to("conversations.history")] == ["C9"]
    assert not [j for j in jobs if j.channel == "C9"]


async def test_service_starts_and_acks_while_slack_is_down_then_learns_its_id(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.fail("auth.test", status=500, times=2)  # past slack-sdk's own single retry
    async with start_tomo(wait_identity=False, MIN_WAIT_SECONDS=60) as tomo:
        identity = tomo.runtime.identity
        health = await tomo.client.get("/healthz")
        assert identity.user_id is None
        ts = await tomo.message("hello while Slack is down")
        # The event's authorizations name the bot user; auth.test later adds the bot id.
        assert (identity.user_id, identity.bot_id) == ("UBOT", None)
        await wait_for(lambda: identity.bot_id == "BBOT", what="auth.test's answer")
        rows = await tomo.rows("SELECT ts FROM message")
    assert health.status_code == 200
    assert rows == [{"ts": ts}]
    assert identity.user_id == "UBOT"


async def test_a_failing_users_info_is_not_retried_on_every_message(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.fail("users.info", status=500, times=50)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("one", user="U2")
        # slack-sdk retries a 500 once by itself: the lookup has failed after two calls.
        await wait_for(lambda: len(slack.calls_to("users.info")) >= 2, what="the first lookup")
        await asyncio.sleep(0.2)
        for text in ("two", "three", "four"):
            await tomo.message(text, user="U2")
        await asyncio.sleep(0.2)
    assert len(slack.calls_to("users.info")) == 2  # not asked again on every message


async def test_bot_users_and_slackbot_are_known_as_bots_and_remembered_across_restarts(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_user("U7", name="statusbot", real_name="Status bot", is_bot=True)  # legacy
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("status: green", user="U7")
        await tomo.message("Reminder: standup.", user="USLACKBOT")
        await wait_for(lambda: {"U7", "USLACKBOT"} <= tomo.runtime.directory.bot_users)
        stored = "SELECT id, is_bot FROM person WHERE id IN ('U7', 'USLACKBOT')"

        async def both_stored() -> bool:  # known in memory first, stored a moment later
            return len(await tomo.rows(stored)) == 2

        await wait_for(both_stored, what="both stored")
        rows = await tomo.rows(stored)
    assert sorted((r["id"], bool(r["is_bot"])) for r in rows) == [("U7", True), ("USLACKBOT", True)]
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await wait_for(lambda: "U7" in tomo.runtime.directory.bot_users, what="loaded at start")
        ts = await tomo.message("<@UBOT> status?", user="U7")
        route = await tomo.rows("SELECT route FROM message WHERE ts = :ts", ts=ts)
    assert route == [{"route": "record"}]


async def test_learn_waits_for_lookups_and_does_not_repeat_one_that_failed(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("C9", "late-channel", member=False)
    slack.add_bot("B0CI", name="ci")
    slack.fail("users.info", status=500, times=2)  # U404: slack-sdk retries once, then gives up
    async with start_tomo() as tomo:
        directory = tomo.runtime.directory
        await directory.learn(channel="C9", people=["U404", "B0CI"])
        await directory.learn(channel=None, people=["U404"])  # failed just now: not asked again
        channels = await tomo.rows("SELECT name FROM channel WHERE id = 'C9'")
        people = await tomo.rows("SELECT id, display_name, is_bot FROM person ORDER BY id")
    assert channels == [{"name": "late-channel"}]
    assert [(p["id"], p["display_name"], bool(p["is_bot"])) for p in people] == [
        ("B0CI", "ci", True)
    ]
    assert [c["user"] for c in slack.calls_to("users.info")] == ["U404", "U404"]
    assert [c["bot"] for c in slack.calls_to("bots.info")] == ["BBOT", "B0CI"]  # BBOT: app id


async def test_one_bad_channel_name_never_drops_the_others(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("C3", "bad\x00name")  # PostgreSQL refuses a NUL in text
    slack.add_channel("C4", "x" * 300)  # longer than the column
    async with start_tomo() as tomo:
        names = {r["id"]: r["name"] for r in await tomo.rows("SELECT id, name FROM channel")}
    assert names == {"C1": "general", "C2": "random", "C3": "badname", "C4": "x" * 255}


async def test_odd_entries_in_the_channel_list_are_skipped_or_cleaned(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    def page(_params: Any) -> dict[str, Any]:
        # users.conversations' shape (api.slack.com/methods/users.conversations), with a
        # channel listed twice (the list changed between two pages) and entries no channel has.
        general = {"id": "C1", "name": "general", "is_channel": True, "is_private": False}
        return {
            "ok": True,
            "channels": [
                general,
                {**general, "name": "general-renamed"},
                {"id": {"value": "C7"}, "name": "an id that is no id"},
                {"name": "no id at all"},
                "C8",
                {"id": "C5", "name": {"en": "a name that is no string"}, "is_private": True},
            ],
            "response_metadata": {"next_cursor": ""},
        }

    slack.handle("users.conversations", page)
    async with start_tomo() as tomo:
        rows = await tomo.rows("SELECT id, name, is_private FROM channel ORDER BY id")
    assert rows == [
        {"id": "C1", "name": "general-renamed", "is_private": False},
        {"id": "C5", "name": "C5", "is_private": True},
    ]


async def test_names_are_written_through_the_running_recorder(
    start_tomo: StartTomo, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One writer for the process: on SQLite, a write beside it would wait on its lock."""
    async with start_tomo() as tomo:
        recorder = tomo.runtime.recorder
        through: list[object] = []
        write = recorder.write

        async def spy(work: Any) -> Any:
            through.append(work)
            return await write(work)

        monkeypatch.setattr(recorder, "write", spy)
        await tomo.runtime.directory.fetch_person("U2")
        await tomo.runtime.directory.sync_channels()
        people = await tomo.rows("SELECT id FROM person WHERE id = 'U2'")
    assert len(through) == 2
    assert people == [{"id": "U2"}]
