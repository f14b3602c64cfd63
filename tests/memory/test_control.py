"""`/tomo memory` and `/tomo forget` end to end (docs/how-tomo-works.md#tomo): what tomo remembers
of a channel, shown to the person who asks; forgotten, with nothing written before the forget
feeding that channel's memories again, and the workspace memory rebuilt without it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import text as sql

from tests.conftest import StartTomo, purpose_of, wait_for
from tests.fakes import FakeModel
from tests.fakes.response_url import FakeResponseUrl
from tests.memory.test_refresh import Answers, kind_of, some_talk, stored, subject_of, system_of
from tests.slash import run_command

_last_ts = [0.0]


def fresh_ts() -> str:
    """A ts of now (the harness's own run 5 s behind the clock, before any forget of now)."""
    _last_ts[0] = max(time.time(), _last_ts[0] + 0.000001)
    return f"{_last_ts[0]:.6f}"


def memory_prompts(model: FakeModel, since: int = 0) -> dict[tuple[str, str], str]:
    """(kind, subject) -> the system prompt of each memory request from `since` on."""
    return {
        (kind_of(r), subject_of(r)): system_of(r)
        for r in model.requests[since:]
        if purpose_of(r) == "memory"
    }


def channel_keys(memories: dict[tuple[str, str, str], Any], channel: str) -> set[Any]:
    return {
        key
        for key in memories
        if (key[0] == "channel" and key[1] == channel)
        or (key[0] == "thread" and key[1].startswith(f"{channel}:"))
    }


async def test_memory_shows_what_tomo_remembers_of_this_channel_only(
    start_tomo: StartTomo, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        url = hooks.new_url()
        empty = await run_command(tomo, "memory", response_url=url)
        await some_talk(tomo)
        await tomo.runtime.memory.run()
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(
                sql(
                    "UPDATE memory SET content = content || ' <!channel> & <@U2>' "
                    "WHERE scope = 'channel' AND scope_id = 'C1' AND kind = 'long_term'"
                )
            )
        shown = await run_command(tomo, "memory", response_url=url)
        japanese = await run_command(tomo, "記憶", response_url=url)
    assert empty["text"].startswith("I remember nothing of this channel yet.")
    text = shown["text"]
    assert text.startswith("*What I remember of this channel*")
    order = [
        text.index(m)
        for m in (
            ">MEMORY channel_long_term of #general v1 &lt;!channel&gt; &amp; &lt;@U2&gt;",
            ">MEMORY channel_short_term of #general v1",
            ">MEMORY thread_summary of thread ",
        )
    ]
    assert order == sorted(order)
    assert "#random" not in text and "workspace" not in text and "<!channel>" not in text
    assert japanese["text"].startswith("*このチャンネルについて覚えていること*")


async def test_forget_erases_the_channel_and_rebuilds_the_workspace_without_it(
    start_tomo: StartTomo, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        await tomo.runtime.memory.run()
        before = await stored(tomo)
        first_requests = len(model.requests)
        url = hooks.new_url()
        answer = await run_command(tomo, "forget", response_url=url, user="U2")
        (follow_up,) = await hooks.wait_for_posts(1)
        after = await stored(tomo)
        (control,) = await tomo.rows("SELECT * FROM channel_control")
        rebuild = memory_prompts(model, first_requests)
        memory_after = await run_command(tomo, "memory", response_url=url)

        # Later: an old message edited, a new reply in the old thread, a new message.
        edited = {"type": "message", "subtype": "message_changed", "channel": "C1"}
        edited["message"] = {
            "ts": ts["first"],
            "user": "U1",
            "text": "we should plan the WINTER trip",
            "edited": {"user": "U1", "ts": fresh_ts()},
        }
        assert (await tomo.event(edited)).status_code == 200
        await tomo.message("count me in too", thread_ts=ts["parent"], ts=fresh_ts())
        await tomo.message("the new office opens in May", user="U2", ts=fresh_ts())
        later_requests = len(model.requests)
        await tomo.runtime.memory.run()
        later = memory_prompts(model, later_requests)
        final = await stored(tomo)

    assert len(channel_keys(before, "C1")) == 3  # long-term, short-term, the thread summary
    assert answer["text"].startswith("Done: I erased 3 memories of this channel")
    assert follow_up["url"] == url and follow_up["response_type"] == "ephemeral"
    assert follow_up["text"].startswith("The workspace memory has been rebuilt without")
    assert control["forgotten_by"] == "U2" and control["forgotten_at"] > float(ts["reply_2"])
    assert channel_keys(after, "C1") == set()
    # The workspace memories were written again, from #random alone.
    assert set(rebuild) == {
        ("workspace_long_term", "workspace"),
        ("workspace_short_term", "workspace"),
    }
    for prompt in rebuild.values():
        assert "#random" in prompt and "#general" not in prompt and "of #general" not in prompt
    assert after[("workspace", "", "long_term")]["updated_at"] >= control["forgotten_at"]
    assert memory_after["text"].startswith("I remember nothing of this channel yet (its memories")

    # Only what was written after the forget feeds #general's memories.
    general = {key: prompt for key, prompt in later.items() if key[1] != "workspace"}
    assert set(general) == {
        ("channel_short_term", "#general"),
        ("channel_long_term", "#general"),
        ("thread_summary", f"thread {ts['parent']}"),
    }
    for prompt in general.values():
        for old in ("summer trip", "WINTER trip", "who wants ramen", "booked for 7pm"):
            assert old not in prompt
    assert "the new office opens in May" in general[("channel_long_term", "#general")]
    assert "count me in too" in general[("thread_summary", f"thread {ts['parent']}")]
    assert (
        "## Your long-term memory of #general so far"
        not in general[("channel_long_term", "#general")]
    )
    assert ("channel", "C1", "long_term") in final


async def test_a_memory_pass_under_way_never_writes_back_what_was_forgotten(
    start_tomo: StartTomo, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await some_talk(tomo)
        model.delay(0.8, times=5)  # the pass's channel and thread memories take a while
        running = asyncio.create_task(tomo.runtime.memory.run())
        await model.wait_for_requests(1)  # the pass has read the old memories
        answer = await run_command(tomo, "forget", response_url=hooks.new_url())
        outcome = await running
        (follow_up,) = await hooks.wait_for_posts(1)
        memories = await stored(tomo)
        workspace = [
            system_of(r)
            for r in model.requests
            if purpose_of(r) == "memory" and kind_of(r).startswith("workspace")
        ]
    assert answer["text"].startswith("Done: I erased 0 memories")
    assert outcome is not None and channel_keys(memories, "C1") == set()
    assert follow_up["text"].startswith("The workspace memory has been rebuilt without")
    assert ("workspace", "", "long_term") in memories
    # What the pass wrote of the workspace (from #general's memories) was dropped; the stored
    # workspace memory is the rebuild's, from #random alone.
    assert workspace and "#general" not in workspace[-1]
    assert memories[("workspace", "", "long_term")]["content"].endswith(
        f"v{sum(1 for p in workspace if '[memory:workspace_long_term]' in p)}"
    )


async def test_forget_with_nothing_else_to_remember_says_there_is_no_workspace_memory(
    start_tomo: StartTomo, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("only this channel talks")
        await wait_for(lambda: tomo.rows("SELECT 1 FROM channel WHERE id = 'C1'"))
        await tomo.runtime.memory.run()
        assert ("workspace", "", "long_term") in await stored(tomo)
        answer = await run_command(tomo, "忘れて", response_url=hooks.new_url())
        (follow_up,) = await hooks.wait_for_posts(1)
        memories = await stored(tomo)
    assert answer["text"].startswith("消去しました。このチャンネルの記憶 2 件")
    assert memories == {}
    assert follow_up["text"].startswith("いまワークスペースの記憶はありません")
