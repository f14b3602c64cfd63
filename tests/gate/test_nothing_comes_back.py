"""Nothing comes back (docs/data-and-privacy.md): through the signed endpoint, the model
stand-in's scripted calls of the real tools find nothing written before a channel's
`/tomo forget` though Slack still has it and someone links it; a thread older than the
retention is read live and never stored; a channel tomo left stores nothing of a history
fetched meanwhile; a message Slack deleted is not stored again by a fetch."""

from __future__ import annotations

import time

import pytest

from tests.conftest import StartTomo, later_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.gate.endpoint import SETTINGS, ask, link, script, stored_texts, tool_results
from tests.slash import run_command
from tests.tools.workspace import store

DAY = 86400.0
WORDS = [pytest.param("zebracorn", id="English"), pytest.param("秘密会議", id="Japanese")]


def old_thread(slack: FakeSlack, word: str, *, ago: float) -> tuple[str, str]:
    """A thread in #general `ago` seconds old, in Slack: its parent's ts and a reply's."""
    parent = f"{int(time.time() - ago)}.000100"
    reply = f"{int(time.time() - ago) + 60}.000200"
    slack.add_message("C1", ts=parent, text=f"the {word} plan is on Friday", user="U1")
    slack.add_message("C1", ts=reply, text=f"{word}: budget 300", user="U2", thread_ts=parent)
    return parent, reply


@pytest.mark.parametrize("word", WORDS)
async def test_a_message_from_before_the_forget_is_never_shown_nor_stored_again(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    word: str,
) -> None:
    parent, reply = old_thread(slack, word, ago=3600)
    async with start_tomo(**SETTINGS) as tomo:
        await store(tomo, "C1", f"the {word} plan is on Friday", ts=parent)
        await store(tomo, "C1", f"{word}: budget 300", ts=reply, thread_ts=parent, user="U2")
        answer = await run_command(tomo, "forget", response_url=hooks.new_url())
        # After the forget someone answers in the old thread; Slack still has all of it, and
        # someone links it.
        slack.add_message("C1", ts=later_ts(), text="after the forget", user="U2", thread_ts=parent)
        script(
            model,
            [
                ("read_thread", {"permalink": link("C1", parent)}),
                ("read_thread", {"permalink": link("C1", reply, thread_ts=parent)}),
                ("read_thread", {"channel": "C1", "ts": reply}),
            ],
            [("search_messages", {"query": word}), ("search_messages", {"query": ""})],
        )
        await ask(tomo, slack, "<@UBOT> what did that old thread say?")
        results = tool_results(model)
        kept = await stored_texts(tomo, "C1")
    assert "2" in answer["text"], answer["text"]  # the two messages stored, deleted
    assert len(results) == 5, results
    assert word not in "\n".join(results), results
    assert not [t for t in kept if word in t], kept  # nothing stored again
    # The thread that began before the forget shows only what came after it.
    for thread in results[:3]:
        assert "after the forget" in thread and "Friday" not in thread, thread
        assert ", 1 messages, " in thread, thread
    assert results[3] == "No messages found."
    assert "after the forget" in results[4]


async def test_a_thread_older_than_the_retention_is_read_live_and_never_stored(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    parent, reply = old_thread(slack, "古い議事録", ago=90 * DAY)
    script(
        model,
        [("read_thread", {"permalink": link("C1", parent)})],
        [("search_messages", {"query": "古い議事録"})],
    )
    async with start_tomo(MESSAGE_RETENTION_DAYS=30, **SETTINGS) as tomo:
        await ask(tomo, slack, "<@UBOT> 三か月前のスレッドを読んで")
        thread, search = tool_results(model)
        stored = await tomo.rows("SELECT ts FROM message WHERE ts IN (:p, :r)", p=parent, r=reply)
    assert "the 古い議事録 plan is on Friday" in thread and "古い議事録: budget 300" in thread
    assert ", 2 messages, " in thread
    assert stored == []
    assert search == "No messages found."


async def test_a_channel_left_stores_nothing_of_a_history_fetched_meanwhile(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    """tomo invited into #newroom, and removed while its history is on the way."""
    slack.add_channel("C9", "newroom")
    for n in range(3):
        slack.add_message(
            "C9", ts=f"{int(time.time()) - 600 + n}.000100", text=f"hi {n}", user="U1"
        )
    slack.delay("conversations.history", 1.0)
    async with start_tomo(**SETTINGS) as tomo:
        joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C9", "team": "T0001"}
        assert (await tomo.event(joined | {"channel_type": "C"})).status_code == 200
        await wait_for(lambda: slack.calls_to("conversations.history"), what="the history fetch")
        left = await tomo.event({"type": "channel_left", "channel": "C9", "actor_id": "U1"})
        assert left.status_code == 200
        await wait_for(lambda: not tomo.runtime.directory.busy, what="the fetch's end")
        kept = await stored_texts(tomo, "C9")
    assert kept == []


async def test_a_message_slack_deleted_is_not_stored_again_by_a_fetch_that_raced_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """The deletion is recorded; Slack's answer to a thread fetch begun before it still has
    the message (the stand-in keeps it)."""
    parent, reply = old_thread(slack, "quokkaplan", ago=600)
    script(model, [("read_thread", {"channel": "C1", "ts": parent})])
    async with start_tomo(**SETTINGS) as tomo:
        await store(tomo, "C1", "the quokkaplan plan is on Friday", ts=parent)
        await store(tomo, "C1", "quokkaplan: budget 300", ts=reply, thread_ts=parent, user="U2")
        deleted = {
            "type": "message",
            "subtype": "message_deleted",
            "hidden": True,
            "channel": "C1",
            "ts": later_ts(),
            "deleted_ts": reply,
            "event_ts": later_ts(),
            "channel_type": "channel",
            "previous_message": {"type": "message", "user": "U2", "text": "x", "ts": reply},
        }
        assert (await tomo.event(deleted)).status_code == 200
        await ask(tomo, slack, "<@UBOT> read it")
        (thread,) = tool_results(model)
        kept = await stored_texts(tomo, "C1")
    assert "budget 300" not in thread and "Friday" in thread
    assert not [t for t in kept if "budget" in t], kept
