"""`read_thread`: the whole thread, parent first, from what tomo stored completed by Slack's
conversations.replies (paged, as Slack pages it), what is stored when Slack cannot answer, a
long thread cut to fit one result, and bad arguments."""

from __future__ import annotations

import pytest

from app.tools.base import RESULT_CHARS
from app.tools.read_thread import NOTHING, ReadThread
from tests.conftest import StartTomo
from tests.fakes import FakeSlack
from tests.tools.kit import kit_of
from tests.tools.workspace import asker, store, ts_ago

URL = "https://fake.slack.test/"


def thread_in_slack(slack: FakeSlack, channel: str, replies: int, *, text: str = "reply") -> str:
    parent = ts_ago(5000)
    slack.add_message(channel, ts=parent, text="the parent: shall we ship?", user="U1")
    for n in range(replies):
        slack.add_message(
            channel, ts=ts_ago(4000 - n), text=f"{text} {n}", user="U2", thread_ts=parent
        )
    return parent


async def test_the_whole_thread_comes_parent_first_completed_from_slack(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    parent = thread_in_slack(slack, "C1", 150)
    replies = [m for m in slack.history("C1") if m.get("thread_ts") == parent and m["ts"] != parent]
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        # tomo stored the parent and two replies; Slack has 150.
        await store(tomo, "C1", "the parent: shall we ship?", ts=parent)
        for reply in replies[-2:]:
            await store(tomo, "C1", reply["text"], ts=reply["ts"], thread_ts=parent, user="U2")
        await tomo.runtime.directory.fetch_person("U2")
        read = ReadThread(kit_of(tomo))
        link = f"{URL}archives/C1/p{replies[40]['ts'].replace('.', '')}?thread_ts={parent}&cid=C1"
        by_reply = await read.run({"permalink": link}, asker=asker("C2"))
        by_ts = await read.run({"channel": "#general", "ts": parent}, asker=asker("C2"))
        stored = await tomo.rows("SELECT count(*) AS n FROM message WHERE thread_ts = :t", t=parent)
    lines = by_reply.text.splitlines()
    link = f"{URL}archives/C1/p{parent.replace('.', '')}"
    assert lines[0].startswith("Thread in #general, 151 messages, started ")
    assert lines[0].endswith(f", {link}:")
    assert "] Alice: the parent: shall we ship?" in lines[1]
    assert [line.rsplit(" ", 1)[-1] for line in lines[2:]] == [str(n) for n in range(150)]
    assert "] Bob: reply 0" in lines[2]
    assert by_ts.text == by_reply.text and by_reply.sources == (link,)
    assert stored == [{"n": 150}]  # what Slack had is stored now, as a reply's thread is
    assert len(by_reply.text) <= RESULT_CHARS


async def test_what_is_stored_when_slack_cannot_answer(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        parent = await store(tomo, "C1", "stored parent", ago=300)  # Slack has no such thread
        await store(tomo, "C1", "stored reply", thread_ts=parent, ago=200)
        result = await ReadThread(kit_of(tomo)).run(
            {"channel": "C1", "ts": parent}, asker=asker("C1")
        )
        missing = await ReadThread(kit_of(tomo)).run(
            {"channel": "C1", "ts": ts_ago(10)}, asker=asker("C1")
        )
    assert "2 messages" in result.text and "this conversation" in result.text
    assert result.text.index("stored parent") < result.text.index("stored reply")
    assert missing.ok and missing.text == NOTHING


async def test_a_long_thread_is_cut_to_fit_keeping_its_parent_and_newest_replies(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    parent = thread_in_slack(slack, "C1", 320, text="a long reply, " * 20)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        result = await ReadThread(kit_of(tomo)).run(
            {"channel": "C1", "ts": parent}, asker=asker("C1")
        )
    lines = result.text.splitlines()
    assert len(result.text) <= RESULT_CHARS
    assert "the parent" in lines[1]
    left_out = lines[2]
    assert left_out.startswith("(") and left_out.endswith("earlier replies left out)")
    assert lines[-1].endswith("…") and "a long reply" in lines[-1]
    # 299 of Slack's 320 replies are read (the parent and its newest ones), the rest cut.
    assert int(left_out[1:].split()[0]) + len(lines) - 3 == 299


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"permalink": "https://example.com/not-slack"},
        {"permalink": 12},
        {"channel": "C1"},
        {"channel": "C1", "ts": "yesterday"},
        {"channel": 5, "ts": "1712345678.000100"},
        {"url": "https://fake.slack.test/archives/C1/p1712345678000100"},
    ],
)
async def test_bad_arguments_get_an_error_result(
    start_tomo: StartTomo, arguments: dict[str, object]
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        result = await ReadThread(kit_of(tomo)).run(arguments, asker=asker("C1"))
    assert not result.ok and result.text.startswith("error: ")
