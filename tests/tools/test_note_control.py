"""What people and the operator see of the notes, and how they go: `/tomo memory` lists a
channel's notes (and counts the workspace's), `/tomo forget` deletes them, a deleted channel
and an uninstall delete them, the admin page lists them."""

from __future__ import annotations

import time

from app.tools.note import NoteTool
from tests.conftest import ADMIN_TOKEN, StartTomo, Tomo, wait_for
from tests.fakes import FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.retention.stored import DAY
from tests.routes.test_admin_api import basic
from tests.slash import run_command
from tests.tools.kit import asker, kit_of
from tests.tools.test_note import known_channels, private_places

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def notes_in_three_places(tomo: Tomo) -> None:
    tool = NoteTool(kit_of(tomo))
    for claim, (channel, text) in enumerate(
        [
            ("C1", "the team lunch is on Fridays"),
            ("C1", "Bob is learning <Rust> & Go"),
            ("C2", "the office moves in June"),
            ("G1", "the launch code name is Falcon"),
        ],
        start=1,
    ):
        assert (await tool.run({"text": text}, asker=asker(channel, claim=claim))).ok


async def texts(tomo: Tomo) -> list[str]:
    return [r["text"] for r in await tomo.rows("SELECT text FROM note ORDER BY id")]


async def test_memory_lists_the_channels_notes_and_forget_deletes_them(
    start_tomo: StartTomo, slack: FakeSlack, hooks: FakeResponseUrl
) -> None:
    private_places(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await known_channels(tomo)
        await notes_in_three_places(tomo)
        shown = await run_command(tomo, "memory", response_url=hooks.new_url())
        japanese = await run_command(tomo, "記憶", response_url=hooks.new_url())
        private = await run_command(
            tomo, "memory", response_url=hooks.new_url(), channel="G1", channel_name="secret"
        )
        forgotten = await run_command(tomo, "forget", response_url=hooks.new_url())
        left = await texts(tomo)
        after = await run_command(tomo, "memory", response_url=hooks.new_url())
    text = shown["text"]
    assert "*Notes I wrote here* (2;" in text
    assert ">the team lunch is on Fridays" in text
    assert ">Bob is learning &lt;Rust&gt; &amp; Go" in text  # shown as written, never a link
    assert "office" not in text and "Falcon" not in text  # other channels' notes
    assert "I also keep 3 notes written in public channels" in text
    assert "*ここで書いたメモ*(2 件" in japanese["text"]
    assert "どの会話からも見えるメモが 3 件" in japanese["text"]
    assert ">the launch code name is Falcon" in private["text"]
    assert "lunch" not in private["text"]
    assert "and the 2 notes I wrote here" in forgotten["text"]
    assert left == ["the office moves in June", "the launch code name is Falcon"]
    assert "Notes I wrote here" not in after["text"]
    assert "I also keep 1 note written in public channels" in after["text"]


async def test_a_deleted_channel_and_an_uninstall_delete_the_notes(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    private_places(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await known_channels(tomo)
        await notes_in_three_places(tomo)
        assert (await tomo.event({"type": "group_deleted", "channel": "G1"})).status_code == 200
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM erasure WHERE done_at IS NOT NULL"),
            timeout=30,
            what="the channel's erasure",
        )
        after_channel = await texts(tomo)
        assert (await tomo.event({"type": "app_uninstalled"})).status_code == 200
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM erasure WHERE scope = 'team' AND done_at IS NOT NULL"),
            timeout=30,
            what="the workspace's erasure",
        )
        after_uninstall = await texts(tomo)
    assert after_channel == [
        "the team lunch is on Fridays",
        "Bob is learning <Rust> & Go",
        "the office moves in June",
    ]
    assert after_uninstall == []


async def test_the_admin_page_lists_the_notes(start_tomo: StartTomo, slack: FakeSlack) -> None:
    private_places(slack)
    async with start_tomo() as tomo:
        await known_channels(tomo)
        await notes_in_three_places(tomo)
        api = (await tomo.client.get("/admin/memories", headers=BEARER)).json()
        page = await tomo.client.get("/admin", headers=basic(ADMIN_TOKEN))
    notes = {n["text"]: n for n in api["notes"]}
    assert set(notes) == {
        "the team lunch is on Fridays",
        "Bob is learning <Rust> & Go",
        "the office moves in June",
        "the launch code name is Falcon",
    }
    assert notes["the launch code name is Falcon"]["scope"] == "conversation"
    assert notes["the office moves in June"]["conversation"] == "C2"
    assert page.status_code == 200
    assert '<section id="notes">' in page.text
    assert "Bob is learning &lt;Rust&gt; &amp; Go" in page.text
    assert "this conversation only" in page.text


async def test_a_channel_tomo_left_loses_its_notes_with_the_retention(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    retention = {"MESSAGE_RETENTION_DAYS": 7, "ACTIVE_CHANNEL_DAYS": 7, "THREAD_MEMORY_DAYS": 7}
    private_places(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60, **retention) as tomo:
        await known_channels(tomo)
        await notes_in_three_places(tomo)
        left = {"type": "channel_left", "channel": "C1", "actor_id": "U1"}
        assert (await tomo.event(left)).status_code == 200
        soon = await tomo.runtime.purge.run(now=time.time() + DAY)
        kept = await texts(tomo)
        later = await tomo.runtime.purge.run(now=time.time() + 8 * DAY)
        after = await texts(tomo)
    assert "notes" not in soon.counts and len(kept) == 4
    assert later.counts["notes"] == 2
    assert after == ["the office moves in June", "the launch code name is Falcon"]
