"""Thread history end to end (docs/how-tomo-works.md#thread-history): conversations.replies read to
its end, the parent first and the latest replies, stored; the stored messages when Slack does not
answer."""

from __future__ import annotations

import time

import pytest

from tests.conftest import StartTomo, Tomo, turns_of
from tests.fakes import FakeModel, FakeSlack


def seed_thread(slack: FakeSlack, *, replies: int) -> tuple[str, list[str]]:
    """A thread that exists only in Slack: a parent and `replies` replies, oldest first."""
    base = time.time() - 2 * replies - 100
    parent = f"{base:.6f}"
    slack.add_message("C1", ts=parent, text="the parent: where shall we go?", user="U2")
    stamps = []
    for n in range(1, replies + 1):
        ts = f"{base + n:.6f}"
        user = "UBOT" if n % 10 == 0 else ("U1" if n % 2 else "U2")
        bot_id = "BBOT" if user == "UBOT" else None
        slack.add_message(
            "C1", ts=ts, text=f"reply {n}", user=user, bot_id=bot_id, thread_ts=parent
        )
        stamps.append(ts)
    return parent, stamps


def said(turn: dict[str, str]) -> str:
    """What a turn says, without the `<@USER_ID> (name): ` of other people's turns."""
    return turn["content"] if turn["role"] == "assistant" else turn["content"].split(": ", 1)[1]


async def mention_in(tomo: Tomo, parent: str, text: str = "<@UBOT> so, what do you think?") -> str:
    ts = f"{time.time():.6f}"
    tomo.slack.add_message("C1", ts=ts, text=text, user="U1", thread_ts=parent)
    return await tomo.message(text, thread_ts=parent, ts=ts)


async def test_the_reply_sees_the_parent_and_the_latest_replies_of_a_long_thread(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    parent, replies = seed_thread(slack, replies=250)  # more than one page of 200
    model.default_content = "let's go to the mountains"
    async with start_tomo(MIN_WAIT_SECONDS=30, THREAD_HISTORY_LIMIT=3) as tomo:
        mention = await mention_in(tomo, parent)
        (post,) = await slack.wait_for_posts(1)
        stored = await tomo.rows("SELECT ts, thread_ts, user_id, route FROM message ORDER BY ts")
    calls = slack.calls_to("conversations.replies")
    assert len(calls) == 2 and calls[1].get("cursor")  # paged to the end
    turns = turns_of(model.last_request)
    assert [said(t) for t in turns] == [
        "the parent: where shall we go?",
        "reply 248",
        "reply 249",
        "reply 250",
        "<@UBOT> so, what do you think?",
    ]
    assert turns[0]["content"].startswith("<@U2>")
    assert turns[3] == {"role": "assistant", "content": "reply 250"}  # tomo's own
    assert turns[-1]["role"] == "user" and turns[-1]["content"].startswith("<@U1>")
    assert post["thread_ts"] == parent
    # What was fetched is stored (recorded only: it triggers nothing).
    by_ts = {row["ts"]: row for row in stored}
    assert by_ts[parent]["thread_ts"] == "" and by_ts[parent]["route"] == "record"
    for ts in replies[-3:]:
        assert by_ts[ts]["thread_ts"] == parent and by_ts[ts]["route"] == "record"
    assert by_ts[replies[-1]]["user_id"] == "UBOT"
    assert by_ts[mention]["route"] == "reply"


async def test_a_short_thread_is_given_whole(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    parent, _replies = seed_thread(slack, replies=2)
    async with start_tomo(MIN_WAIT_SECONDS=30, THREAD_HISTORY_LIMIT=20) as tomo:
        await mention_in(tomo, parent)
        await slack.wait_for_posts(1)
    turns = turns_of(model.last_request)
    assert [said(t) for t in turns] == [
        "the parent: where shall we go?",
        "reply 1",
        "reply 2",
        "<@UBOT> so, what do you think?",
    ]
    assert len(slack.calls_to("conversations.replies")) == 1


async def test_a_failing_replies_call_falls_back_to_the_stored_messages(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.fail("conversations.replies", status=500, times=10)
    async with start_tomo(MIN_WAIT_SECONDS=30, THREAD_HISTORY_LIMIT=5) as tomo:
        parent = await tomo.message("stored parent", user="U2")
        await tomo.message("stored reply", thread_ts=parent)
        await mention_in(tomo, parent)
        (post,) = await slack.wait_for_posts(1)
    assert post["thread_ts"] == parent
    assert slack.calls_to("conversations.replies")  # it was tried
    turns = turns_of(model.last_request)
    assert [said(t) for t in turns] == [
        "stored parent",
        "stored reply",
        "<@UBOT> so, what do you think?",
    ]


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"ok": true, "messages": [{"ts": "17', "application/json"),  # cut short
        (b"<html>upstream connect error</html>", "text/html"),
        (b"upstream connect error", "text/plain"),
    ],
)
async def test_an_unreadable_replies_answer_falls_back_to_the_stored_messages(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, body: bytes, content_type: str
) -> None:
    slack.garble("conversations.replies", body=body, content_type=content_type, times=2)
    async with start_tomo(MIN_WAIT_SECONDS=30, THREAD_HISTORY_LIMIT=5) as tomo:
        parent = await tomo.message("stored parent", user="U2")
        await mention_in(tomo, parent)
        (post,) = await slack.wait_for_posts(1)
    assert post["thread_ts"] == parent
    turns = turns_of(model.last_request)
    assert [said(t) for t in turns] == ["stored parent", "<@UBOT> so, what do you think?"]


async def test_a_rate_limited_replies_call_falls_back_at_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Non-Marketplace apps may call conversations.replies once a minute: waiting out a
    Retry-After of 30 s would hold the reply; the stored messages are used instead."""
    slack.fail("conversations.replies", status=429, retry_after=30, times=3)
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        parent = await tomo.message("stored parent", user="U2")
        started = time.monotonic()
        await mention_in(tomo, parent)
        (post,) = await slack.wait_for_posts(1)
        waited = time.monotonic() - started
    assert post["thread_ts"] == parent and waited < 4  # not the 30 s Retry-After
    assert len(slack.calls_to("conversations.replies")) == 1
    turns = turns_of(model.last_request)
    assert turns[0]["content"].endswith("stored parent")


async def test_a_top_level_mention_needs_no_history_call(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("<@UBOT> hello")
        await slack.wait_for_posts(1)
    assert slack.calls_to("conversations.replies") == []
    assert len(turns_of(model.last_request)) == 1


async def test_a_parent_deleted_while_tomo_missed_the_event_is_deleted_at_refresh(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    # tomo stored the parent from its event; the deletion's event never reached it. The
    # thread's refresh shows the tombstone (tests/fakes/slack_shapes.py: tombstone).
    started = time.time()
    async with start_tomo(MIN_WAIT_SECONDS=30, THREAD_HISTORY_LIMIT=20) as tomo:
        parent = await tomo.message("the secret plan for friday", user="U2")
        slack.add_message("C1", ts=parent, text="the secret plan for friday", user="U2")
        reply_ts = f"{float(parent) + 0.5:.6f}"
        slack.add_message("C1", ts=reply_ts, text="count me in", user="U1", thread_ts=parent)
        slack.delete_parent("C1", parent)
        await mention_in(tomo, parent)
        (post,) = await slack.wait_for_posts(1)
        rows = await tomo.rows("SELECT text FROM message WHERE ts = :ts", ts=parent)
        (removal,) = await tomo.rows("SELECT removed_at FROM removal WHERE ts = :ts", ts=parent)
    assert post["thread_ts"] == parent
    assert rows == []  # deleted, not only hidden
    assert removal["removed_at"] >= started  # the removal is news for the channel's memories
    prompt = "\n".join(str(m["content"]) for m in model.last_request["messages"])
    assert "secret plan" not in prompt and "This message was deleted." not in prompt
    assert "count me in" in prompt
