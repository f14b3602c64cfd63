"""The memory job over real HTTP: Slack events in, memory prompts to the model stand-in,
memories stored, reused in the next prompts, and not rewritten while nothing changed."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from typing import Any

from tests.conftest import (
    ADMIN_TOKEN,
    StartTomo,
    Tomo,
    judgment_json,
    next_ts,
    purpose_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack

MARKER = re.compile(r"\[memory:(\w+)\]")


def system_of(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def kind_of(request: dict[str, Any]) -> str:
    found = MARKER.search(system_of(request))
    assert found, "a memory prompt carries its marker"
    return found.group(1)


def subject_of(request: dict[str, Any]) -> str:
    """What a memory prompt is about: #channel, a thread, or the workspace."""
    system = system_of(request)
    thread = re.search(r"## Thread (\S+) in #(\S+),", system)
    if thread:
        return f"thread {thread.group(1)}"
    channel = re.search(r"memory of #(\S+?):", system)
    return f"#{channel.group(1)}" if channel else "workspace"


class Answers:
    """The model stand-in: judgments say no, replies say hi, each memory says what it is and
    how many times it was written."""

    def __init__(self, model: FakeModel) -> None:
        self.written: Counter[tuple[str, str]] = Counter()
        model.responder = self

    def __call__(self, request: dict[str, Any]) -> str:
        purpose = purpose_of(request)
        if purpose == "judgment":
            return judgment_json(False)
        if purpose == "reply":
            return "hi!"
        key = (kind_of(request), subject_of(request))
        self.written[key] += 1
        return f"MEMORY {key[0]} of {key[1]} v{self.written[key]}"


def memory_requests(model: FakeModel) -> list[dict[str, Any]]:
    return model.requests_for(lambda r: purpose_of(r) == "memory")


async def stored(tomo: Tomo) -> dict[tuple[str, str, str], dict[str, Any]]:
    rows = await tomo.rows("SELECT * FROM memory")
    return {(r["scope"], r["scope_id"], r["kind"]): r for r in rows}


async def some_talk(tomo: Tomo) -> dict[str, str]:
    """Two channels, one thread; returns the ts of what tests look at."""
    first = await tomo.message("we should plan the summer trip", user="U1")
    parent = await tomo.message("who wants ramen on Friday?", user="U2")
    reply_1 = await tomo.message("me! the place near the station", thread_ts=parent, user="U1")
    reply_2 = await tomo.message("booked for 7pm", thread_ts=parent, user="U2")
    other = await tomo.message("lovely weather today", channel="C2", user="U1")
    await wait_for(
        lambda: _count(tomo, "SELECT count(*) AS n FROM message", 5), what="messages recorded"
    )
    await channels_known(tomo)
    return {"first": first, "parent": parent, "reply_1": reply_1, "reply_2": reply_2, "c2": other}


async def channels_known(tomo: Tomo) -> None:
    """The directory has listed C1 and C2 (only known public channels reach the workspace)."""
    await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM channel", 2), what="channels")


async def _count(tomo: Tomo, sql: str, n: int) -> bool:
    return (await tomo.rows(sql))[0]["n"] >= n


async def test_memories_are_written_after_activity_with_their_sources(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        outcome = await tomo.runtime.memory.run()
        memories = await stored(tomo)

    assert outcome is not None and not outcome.failed
    thread_id = f"C1:{ts['parent']}"
    assert set(memories) == {
        ("channel", "C1", "short_term"),
        ("channel", "C1", "long_term"),
        ("channel", "C2", "short_term"),
        ("channel", "C2", "long_term"),
        ("thread", thread_id, "summary"),
        ("workspace", "", "short_term"),
        ("workspace", "", "long_term"),
    }
    # source_ts is the newest message each memory has seen; workspace = newest channel memory.
    assert memories[("channel", "C1", "short_term")]["source_ts"] == ts["reply_2"]
    assert memories[("channel", "C1", "long_term")]["source_ts"] == ts["reply_2"]
    assert memories[("channel", "C2", "long_term")]["source_ts"] == ts["c2"]
    assert memories[("thread", thread_id, "summary")]["source_ts"] == ts["reply_2"]
    assert memories[("workspace", "", "long_term")]["source_ts"] == ts["c2"]
    assert (
        memories[("channel", "C1", "long_term")]["content"]
        == "MEMORY channel_long_term of #general v1"
    )
    assert all(m["model"] and m["updated_at"] > 0 for m in memories.values())

    requests = memory_requests(model)
    assert len(requests) == 7 == len(model.requests)
    assert all(r["model"] == "test-model" for r in requests)
    by_kind = {(kind_of(r), subject_of(r)): system_of(r) for r in requests}
    short = by_kind[("channel_short_term", "#general")]
    assert "we should plan the summer trip" in short and "booked for 7pm" in short
    assert "lovely weather" not in short
    assert "language the conversation uses" in short
    # The thread's summary reads the parent first, then every reply in order.
    summary = by_kind[("thread_summary", f"thread {ts['parent']}")]
    order = [summary.index(t) for t in ("who wants ramen", "the place near", "booked for 7pm")]
    assert order == sorted(order)
    assert "summer trip" not in summary
    # The workspace's memories are written from the channels' memories.
    workspace = by_kind[("workspace_long_term", "workspace")]
    assert "MEMORY channel_long_term of #general v1" in workspace
    assert "MEMORY channel_long_term of #random v1" in workspace


async def test_memories_enter_the_next_reply_broad_to_narrow(
    start_tomo: StartTomo, model: FakeModel, slack: FakeSlack
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        await tomo.runtime.memory.run()
        await tomo.message("<@UBOT> what did we decide?", user="U1", kind="app_mention")
        await slack.wait_for_posts(1)

    replies = model.requests_for(lambda r: purpose_of(r) == "reply")
    assert len(replies) == 1
    system = system_of(replies[0])
    sections = [
        "MEMORY workspace_long_term of workspace v1",
        "MEMORY workspace_short_term of workspace v1",
        "## Channels",
        "- #random",
        "MEMORY channel_long_term of #general v1",
        "MEMORY channel_short_term of #general v1",
        "MEMORY channel_long_term of #random v1",
        f"### Thread {ts['parent']}\nMEMORY thread_summary of thread {ts['parent']} v1",
        "## Recently in #general",
    ]
    positions = [system.find(s) for s in sections]
    assert -1 not in positions, [s for s, p in zip(sections, positions, strict=True) if p < 0]
    assert positions == sorted(positions)


async def test_an_idle_workspace_costs_no_model_calls_and_only_what_changed_is_rewritten(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answers = Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        await tomo.runtime.memory.run()
        first = len(model.requests)
        idle = await tomo.runtime.memory.run()
        after_idle = len(model.requests)

        newest = await tomo.message("anyone up for a walk?", channel="C2", user="U2")
        await wait_for(
            lambda: _count(tomo, f"SELECT count(*) AS n FROM message WHERE ts = '{newest}'", 1)
        )
        changed = await tomo.runtime.memory.run()
        memories = await stored(tomo)

    assert first == 7
    assert idle is not None and idle.written == idle.removed == idle.failed == []
    assert after_idle == first
    assert changed is not None
    assert sorted(changed.written) == [
        "channel:C2:long_term",
        "channel:C2:short_term",
        "workspace:long_term",
        "workspace:short_term",
    ]
    assert answers.written[("channel_long_term", "#general")] == 1
    assert answers.written[("thread_summary", f"thread {ts['parent']}")] == 1
    # The long-term memory folds the previous one with what is new, and nothing else.
    folds = [system_of(r) for r in model.requests[first:] if kind_of(r) == "channel_long_term"]
    assert len(folds) == 1
    fold = folds[0]
    assert "MEMORY channel_long_term of #random v1" in fold
    assert "anyone up for a walk?" in fold and "lovely weather" not in fold
    assert memories[("channel", "C2", "long_term")]["source_ts"] == newest


async def test_a_new_reply_rewrites_the_thread_summary_with_every_reply(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        await tomo.runtime.memory.run()
        before = len(model.requests)
        late = await tomo.message("see you all there", thread_ts=ts["parent"], user="U1")
        await wait_for(
            lambda: _count(tomo, f"SELECT count(*) AS n FROM message WHERE ts = '{late}'", 1)
        )
        outcome = await tomo.runtime.memory.run()

    assert outcome is not None and f"thread:C1:{ts['parent']}:summary" in outcome.written
    summaries = [r for r in model.requests[before:] if kind_of(r) == "thread_summary"]
    assert len(summaries) == 1
    text = system_of(summaries[0])
    texts = ["who wants ramen", "the place near", "booked for 7pm", "see you all there"]
    positions = [text.find(t) for t in texts]
    assert -1 not in positions and positions == sorted(positions)


async def test_one_memory_failing_keeps_the_previous_and_the_others_go_on(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    answers = Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await some_talk(tomo)
        await tomo.runtime.memory.run()
        await tomo.message("new in general", user="U1")
        await tomo.message("new in random", channel="C2", user="U2")
        await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM message", 7))

        def broken(request: dict[str, Any]) -> str:
            if purpose_of(request) == "memory" and subject_of(request) == "#general":
                if kind_of(request) == "channel_long_term":
                    raise RuntimeError("model down for this one")
                return "   "  # nonsense: an empty memory
            return answers(request)

        model.responder = broken
        failing = await tomo.runtime.memory.run()
        kept = await stored(tomo)
        health = await tomo.client.get("/healthz")
        model.responder = answers
        healed = await tomo.runtime.memory.run()
        final = await stored(tomo)

    assert failing is not None
    assert sorted(failing.failed) == ["channel:C1:long_term", "channel:C1:short_term"]
    assert "channel:C2:long_term" in failing.written and "workspace:long_term" in failing.written
    assert kept[("channel", "C1", "long_term")]["content"] == (
        "MEMORY channel_long_term of #general v1"
    )
    assert kept[("channel", "C2", "long_term")]["content"].endswith("v2")
    assert health.status_code == 200
    # The next run writes what failed, and only what is still stale.
    assert healed is not None and not healed.failed
    assert "channel:C1:long_term" in healed.written and "channel:C1:short_term" in healed.written
    assert not any(w.startswith("channel:C2") for w in healed.written)
    assert final[("channel", "C1", "long_term")]["content"].endswith("v2")


async def test_an_edit_is_folded_in_and_a_deletion_leaves_the_memories(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await some_talk(tomo)
        await tomo.runtime.memory.run()
        start = len(model.requests)
        edited = {"type": "message", "subtype": "message_changed", "channel": "C1"}
        edited["message"] = {
            "ts": ts["first"],
            "user": "U1",
            "text": "we should plan the WINTER trip",
            "edited": {"user": "U1", "ts": f"{time.time():.6f}"},
        }
        assert (await tomo.event(edited)).status_code == 200
        await wait_for(
            lambda: _count(tomo, "SELECT count(*) AS n FROM message WHERE text LIKE '%WINTER%'", 1)
        )
        after_edit = await tomo.runtime.memory.run()
        edit_requests = model.requests[start:]

        secret = await tomo.message("my password is hunter2", channel="C2", user="U2")
        await tomo.runtime.memory.run()
        middle = len(model.requests)
        deleted = {"type": "message", "subtype": "message_deleted", "channel": "C2"}
        deleted |= {"deleted_ts": secret, "previous_message": {"ts": secret}}
        assert (await tomo.event(deleted)).status_code == 200
        # The row is deleted (not only hidden), its removal noted without its text.
        await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM removal", 1))
        gone = await tomo.rows("SELECT count(*) AS n FROM message WHERE ts = :ts", ts=secret)
        assert gone == [{"n": 0}]
        after_delete = await tomo.runtime.memory.run()
        delete_requests = model.requests[middle:]
        memories = await stored(tomo)

    assert after_edit is not None
    assert {"channel:C1:long_term", "channel:C1:short_term"} <= set(after_edit.written)
    fold = next(system_of(r) for r in edit_requests if kind_of(r) == "channel_long_term")
    assert "MEMORY channel_long_term of #general v1" in fold
    assert "(edited):\nwe should plan the WINTER trip" in fold

    # The deleted message was the newest of #random: its memories are written afresh, the
    # long-term one without the memory that had seen the deleted text.
    assert after_delete is not None
    assert {"channel:C2:long_term", "channel:C2:short_term"} <= set(after_delete.written)
    for request in delete_requests:
        assert "hunter2" not in system_of(request)
    afresh = next(system_of(r) for r in delete_requests if kind_of(r) == "channel_long_term")
    assert "MEMORY channel_long_term of #random" not in afresh
    assert "lovely weather today" in afresh
    assert memories[("channel", "C2", "long_term")]["source_ts"] == ts["c2"]


async def test_short_term_memory_is_dropped_when_its_window_is_empty(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60, SHORT_TERM_WINDOW_HOURS=1.5 / 3600) as tomo:
        await channels_known(tomo)
        now = time.time()
        ts = f"{int(now)}.{int((now % 1) * 1e6):06d}"
        await tomo.message("just now", ts=ts)
        await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM message", 1))
        await tomo.runtime.memory.run()
        fresh = await stored(tomo)
        await asyncio.sleep(max(0.0, now + 1.6 - time.time()))
        calls = len(model.requests)
        later = await tomo.runtime.memory.run()
        memories = await stored(tomo)

    assert ("channel", "C1", "short_term") in fresh and ("workspace", "", "short_term") in fresh
    assert later is not None
    assert sorted(later.removed) == ["channel:C1:short_term", "workspace:short_term"]
    assert len(model.requests) == calls  # removing costs no model call
    assert set(memories) == {("channel", "C1", "long_term"), ("workspace", "", "long_term")}


async def test_direct_messages_stay_out_of_the_workspace_and_other_channels(
    start_tomo: StartTomo, model: FakeModel, slack: FakeSlack
) -> None:
    Answers(model)
    slack.add_channel("D1", "U1", is_im=True, user="U1")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM channel", 3))
        await tomo.message("hello in general", user="U2")
        await tomo.message("my secret crush is Bob", channel="D1", channel_type="im", user="U1")
        await wait_for(lambda: _count(tomo, "SELECT count(*) AS n FROM message", 2))
        await tomo.runtime.memory.run()
        memories = await stored(tomo)
        workspace_prompts = [
            system_of(r) for r in memory_requests(model) if kind_of(r).startswith("workspace")
        ]
        await slack.wait_for_posts(1)  # the DM is answered at once
        await tomo.message("<@UBOT> hi", user="U2", kind="app_mention")
        await slack.wait_for_posts(2)

    assert ("channel", "D1", "short_term") in memories  # remembered for the DM itself
    assert len(workspace_prompts) == 2
    assert all("#U1" not in p and "D1" not in p for p in workspace_prompts)
    reply = system_of(model.requests_for(lambda r: purpose_of(r) == "reply")[-1])
    assert "MEMORY channel_short_term of #general" in reply
    assert "#U1" not in reply and "D1" not in reply


async def test_the_memory_job_runs_on_its_interval(start_tomo: StartTomo, model: FakeModel) -> None:
    Answers(model)
    async with start_tomo(MIN_WAIT_SECONDS=60, MEMORY_UPDATE_INTERVAL_SECONDS=0.3) as tomo:
        jobs = (
            await tomo.client.get("/admin/jobs", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        ).json()["jobs"]
        await tomo.message("hello there", ts=next_ts())

        async def written() -> bool:
            return len(await stored(tomo)) >= 4

        await wait_for(written, what="the periodic memory job")
    assert {"id": "memory", "kind": "memory"} in [{"id": j["id"], "kind": j["kind"]} for j in jobs]


async def test_a_bot_without_a_user_is_named_in_memory_prompts(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    # A classic bot_message: bot_id and username, no user (Bolt's test_message_bot.py,
    # classic_bot_message_event_payload; tests/fixtures/slack/bot_message_classic.json).
    Answers(model)
    slack.add_bot("B0BACKUP", name="backup-bot")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("is the backup done?", user="U1")
        ts = next_ts()
        bot_post = {
            "type": "message",
            "subtype": "bot_message",
            "text": "Nightly backup finished",
            "ts": ts,
            "username": "backup-bot",
            "bot_id": "B0BACKUP",
            "channel": "C1",
            "event_ts": ts,
            "channel_type": "channel",
        }
        assert (await tomo.event(bot_post)).status_code == 200
        await channels_known(tomo)
        await tomo.runtime.directory.learn(channel=None, people=["B0BACKUP"])
        outcome = await tomo.runtime.memory.run()
    assert outcome is not None and not outcome.failed
    by_kind = {(kind_of(r), subject_of(r)): system_of(r) for r in memory_requests(model)}
    short = by_kind[("channel_short_term", "#general")]
    assert "backup-bot (bot):\nNightly backup finished" in short
    assert "B0BACKUP" not in short
