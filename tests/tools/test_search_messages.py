"""`search_messages` through a running tomo's own parts: what a result shows (author, channel,
time, text, permalink), the words it finds (parts of words, Japanese of two characters, a
word at a text's very end), best first, the window, the limit, and bad arguments."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text as sql

from app.tools.search_messages import MAX_LIMIT, NOTHING, SearchMessages
from tests.conftest import StartTomo
from tests.fakes import FakeSlack
from tests.retention.stored import DAY
from tests.tools.kit import kit_of
from tests.tools.workspace import asker, build, store, ts_ago

URL = "https://fake.slack.test/"


async def test_a_result_names_author_channel_time_and_links_the_message(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        parent = await store(tomo, "C1", "who has the launch date?", ago=120)
        reply = await store(tomo, "C1", "The LAUNCH date is March 3", thread_ts=parent, user="U2")
        other = await store(tomo, "C2", "prelaunch checklist done", ago=200)
        result = await SearchMessages(kit_of(tomo)).run({"query": "launch"}, asker=asker("C2"))
        identity = tomo.runtime.identity.snapshot()
    assert identity["url"] == URL  # auth.test's url, kept for the job worker too
    when = time.strftime("%Y-%m-%d", time.gmtime(float(reply)))
    assert result.ok and result.text.startswith("3 messages (best matches first):")
    assert f"#general, {when}" in result.text
    assert "this conversation" in result.text  # C2 is where the reply goes
    assert "<@U2> (Bob): The LAUNCH date is March 3" in result.text  # any case
    assert "<@U1> (Alice): prelaunch checklist done" in result.text  # a part of a word
    reply_link = f"{URL}archives/C1/p{reply.replace('.', '')}?thread_ts={parent}&cid=C1"
    assert reply_link in result.text
    assert set(result.sources) == {
        reply_link,
        f"{URL}archives/C1/p{parent.replace('.', '')}",
        f"{URL}archives/C2/p{other.replace('.', '')}",
    }


async def test_words_in_japanese_and_short_words_are_found(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", "明日の予算会議は10時からです", ago=100)
        await store(tomo, "C1", "来週は全体の会議", ago=90)  # 会議 at the very end
        await store(tomo, "C1", "猫", ago=80)  # one character, the whole text
        await store(tomo, "C1", "ok then, deploy it", ago=70)
        await store(tomo, "C1", "okay", ago=60)
        search = SearchMessages(kit_of(tomo))
        results = {
            q: (await search.run({"query": q}, asker=asker("C1"))).text
            for q in ("会議", "予算会議", "予算 会議", "猫", "ok deploy", "ok", "議は1", "犬")
        }
    assert "予算会議" in results["会議"] and "全体の会議" in results["会議"]
    assert results["予算会議"].startswith("1 messages") and "予算会議" in results["予算会議"]
    assert results["予算 会議"].startswith("1 messages")  # both words, in one message
    assert "<@U1> (Alice): 猫" in results["猫"]
    assert results["ok deploy"].startswith("1 messages")
    assert "okay" in results["ok"] and "ok then" in results["ok"]
    assert "予算会議は10時" in results["議は1"]  # any part of the text
    assert results["犬"] == NOTHING


async def test_best_matches_first_then_the_newest(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", "zebracorn zebracorn zebracorn", ago=300)
        await store(tomo, "C1", "a long message " * 20 + "that says zebracorn once", ago=200)
        await store(tomo, "C1", "zebracorn, newest", ago=100)
        await store(tomo, "C1", "zebracorn, oldest", ago=250)
        found = await SearchMessages(kit_of(tomo)).run({"query": "zebracorn"}, asker=asker("C1"))
    lines = [line for line in found.text.splitlines() if line.startswith("   ")]
    assert "a long message" in lines[-1]  # the weakest match last
    assert lines.index(next(x for x in lines if "newest" in x)) < lines.index(
        next(x for x in lines if "oldest" in x)
    )


async def test_an_empty_query_lists_a_channels_newest_messages_in_the_window(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(
        MIN_WAIT_SECONDS=60, MESSAGE_RETENTION_DAYS=7, ACTIVE_CHANNEL_DAYS=7, THREAD_MEMORY_DAYS=7
    ) as tomo:
        for n in range(25):
            await store(tomo, "C1", f"design note {n}", ago=1000 - n)
        await store(tomo, "C1", "three days ago", ago=3 * DAY)
        await store(tomo, "C1", "beyond the retention", ts=ts_ago(8 * DAY))
        await store(tomo, "C2", "design elsewhere", ago=10)
        search = SearchMessages(kit_of(tomo))
        named = [
            (await search.run({"query": "", "channel": c}, asker=asker("C1"))).text
            for c in ("#general", "general", "C1", "<#C1|general>", " #General ")
        ]
        most = await search.run({"query": "", "channel": "C1", "limit": 50}, asker=asker("C1"))
        two = await search.run({"query": "", "channel": "C1", "limit": 2}, asker=asker("C1"))
        week = await search.run(
            {"query": "", "channel": "C1", "limit": 20, "days": 7}, asker=asker("C1")
        )
        day = await search.run({"query": "note", "days": 1, "limit": 20}, asker=asker("C1"))
        old = await search.run({"query": "retention"}, asker=asker("C1"))
    assert len(set(named)) == 1 and "design note 24" in named[0] and "elsewhere" not in named[0]
    assert named[0].startswith("10 messages:")
    assert most.text.startswith(f"{MAX_LIMIT} messages:")  # at most 20
    assert "design note 24" in two.text and "design note 23" in two.text
    assert "three days ago" not in week.text  # the 20 newest come first
    assert "three days ago" not in day.text and day.text.startswith("20 messages")
    assert old.text == NOTHING  # stored, but older than MESSAGE_RETENTION_DAYS


async def test_deleted_and_system_messages_are_never_found(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", "zebracorn visible", ago=100)
        async with tomo.runtime.engine.begin() as connection:
            for n, (kind, deleted) in enumerate((("system", False), ("conversational", True))):
                await connection.execute(
                    sql(
                        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts,"
                        " route, text, kind, created_at, deleted) VALUES ('C1', :ts, 'T0001',"
                        " '', '', 'record', :text, :kind, :at, :deleted)"
                    ),
                    {
                        "ts": ts_ago(50 + n),
                        "text": f"zebracorn {kind} {deleted}",
                        "kind": kind,
                        "at": time.time() - 50,
                        "deleted": deleted,
                    },
                )
        found = await SearchMessages(kit_of(tomo)).run({"query": "zebracorn"}, asker=asker("C1"))
    assert found.text.startswith("1 messages") and "zebracorn visible" in found.text


@pytest.mark.parametrize(
    "arguments",
    [
        {"query": "x", "channels": "C1"},
        {"query": 5},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": "ten"},
        {"query": "x", "limit": 2.5},
        {"query": "x", "limit": True},
        {"query": "x", "days": -1},
        {"query": "x", "days": "week"},
        {"query": "x", "days": float("nan")},
        {"query": "x", "channel": ["C1"]},
    ],
)
async def test_bad_arguments_get_an_error_result(
    start_tomo: StartTomo, arguments: dict[str, object]
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        result = await SearchMessages(kit_of(tomo)).run(arguments, asker=asker("C1"))
    assert not result.ok and result.text.startswith("error: ")


async def test_query_syntax_is_only_words(start_tomo: StartTomo, slack: FakeSlack) -> None:
    """What would be FTS5 or LIKE syntax is looked for as it is written."""
    build(slack)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", 'a "quoted" 100% done_ok NEAR(x) a*b', ago=100)
        search = SearchMessages(kit_of(tomo))
        queries = [
            '"quoted"',
            "100%",
            "done_ok",
            "NEAR(x)",
            "a*b",
            '"',
            "*",
            "%",
            "_",
            "AND",
            "OR x",
        ]
        found = {q: (await search.run({"query": q}, asker=asker("C1"))).text for q in queries}
        percent = (await search.run({"query": "0%"}, asker=asker("C1"))).text
        underscore = (await search.run({"query": "e_o"}, asker=asker("C1"))).text
        nothing = (await search.run({"query": "x%y"}, asker=asker("C1"))).text
    for query in ('"quoted"', "100%", "done_ok", "NEAR(x)", "a*b"):
        assert found[query].startswith("1 messages"), query
    assert percent.startswith("1 messages") and underscore.startswith("1 messages")
    assert nothing == NOTHING  # % is a character here, not "anything"
