"""Slack's own deletions are followed (docs/data-and-privacy.md): a channel deleted loses
everything tomo kept of it; tomo removed from a channel stops storing it and its memories go
after the retention; the app uninstalled stops every timer, deletes everything, and nothing
more goes to Slack or the model; a deletion cut short by a restart is carried on."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import text as sql

from app.jobs.kinds import JobKind
from tests.conftest import StartTomo, Tomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.retention.stored import DAY, TABLES, counts, put_memory, put_message, put_records, ts_at


async def seed(tomo: Tomo, channel: str, now: float, n: int) -> None:
    await put_message(tomo, channel=channel, ts=ts_at(now, n), text=f"{channel} parent")
    await put_message(
        tomo, channel=channel, ts=ts_at(now, n + 1), text="reply", thread_ts=ts_at(now, n)
    )
    await put_records(tomo, channel=channel, at=now, n=n)
    await put_memory(tomo, scope="channel", scope_id=channel, kind="long_term", content="m")
    await put_memory(
        tomo, scope="thread", scope_id=f"{channel}:{ts_at(now, n)}", kind="summary", content="s"
    )


async def erased(tomo: Tomo) -> bool:
    rows = await tomo.rows("SELECT done_at FROM erasure WHERE reason != 'left'")
    return bool(rows) and all(r["done_at"] is not None for r in rows)


async def replied(tomo: Tomo, slack: FakeSlack, channel: str, thread_ts: str) -> bool:
    """Whether a mention's reply is over, down to its last call to Slack: posted, and its
    "on it" sign cleared (after the post) and forgotten. A reply ends only then; the post alone
    leaves the sign's clearing to come, which a count of Slack's calls taken meanwhile misses."""
    cleared = [
        params
        for params in slack.calls_to("assistant.threads.setStatus")
        if (params.get("channel_id"), params.get("thread_ts"), params.get("status"))
        == (channel, thread_ts, "")
    ]
    return bool(slack.posts() and cleared) and not await tomo.rows("SELECT 1 FROM on_it")


async def test_a_deleted_channel_loses_everything_tomo_kept_of_it(start_tomo: StartTomo) -> None:
    now = time.time() - 60
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await seed(tomo, "C1", now, 0)
        await seed(tomo, "C2", now, 10)
        await put_memory(tomo, scope="workspace", scope_id="", kind="long_term", content="w")
        await tomo.message("is anyone there?", channel="C1")
        await tomo.message("and here?", channel="C2")
        assert {t.channel for t in await tomo.timers("judgment")} == {"C1", "C2"}
        assert (await tomo.event({"type": "channel_deleted", "channel": "C1"})).status_code == 200
        await wait_for(lambda: erased(tomo), timeout=30, what="the erasure")
        left = {
            table: await tomo.rows(f"SELECT * FROM {table}")
            for table in ("message", "judgment", "reply", "feedback", "removal", "channel")
        }
        memories = await tomo.rows("SELECT scope, scope_id FROM memory ORDER BY scope, scope_id")
        timers = await tomo.timers("judgment", "reply")
        await tomo.message("a late message in the deleted channel", channel="C1")
        late = await tomo.rows("SELECT ts FROM message WHERE channel = 'C1'")
    for table, rows in left.items():
        assert rows, table
        assert all(r.get("channel", r.get("id")) != "C1" for r in rows), table
    assert len(left["message"]) == 3  # C2's two and its new message
    # C2's memories stay; C1's go, and the workspace's (written from C1's too) with them.
    assert [(m["scope"], m["scope_id"]) for m in memories] == [
        ("channel", "C2"),
        ("thread", f"C2:{ts_at(now, 10)}"),
    ]
    assert [t.channel for t in timers] == ["C2"]
    assert late == []


# tomo removed, as Slack tells it: `channel_left`, or `member_left_channel` naming tomo
# (docs.slack.dev/reference/events/channel_left: "sometimes withheld").
REMOVED = [
    {"type": "channel_left", "channel": "C1", "actor_id": "U1"},
    {"type": "member_left_channel", "user": "UBOT", "channel": "C1", "channel_type": "C"},
]


@pytest.mark.parametrize("removed", REMOVED, ids=["channel_left", "member_left_channel"])
async def test_removed_from_a_channel_tomo_stops_storing_it_and_its_memories_go_later(
    start_tomo: StartTomo, removed: dict[str, Any]
) -> None:
    now = time.time() - 60
    retention = {"MESSAGE_RETENTION_DAYS": 7, "ACTIVE_CHANNEL_DAYS": 7, "THREAD_MEMORY_DAYS": 7}
    async with start_tomo(MIN_WAIT_SECONDS=60, **retention) as tomo:
        await seed(tomo, "C1", now, 0)
        assert (await tomo.event(removed)).status_code == 200
        await tomo.message("said after tomo left", channel="C1")
        kept = await counts(tomo)
        soon = await tomo.runtime.purge.run(now=time.time() + DAY)
        memories_soon = await counts(tomo)
        later = await tomo.runtime.purge.run(now=time.time() + 8 * DAY)
        memories_later = (await counts(tomo))["memory"]
        # Invited back: stored again.
        joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": "T0001"}
        assert (await tomo.event(joined)).status_code == 200
        back = await tomo.message("welcome back", channel="C1")
        stored_back = await tomo.rows("SELECT ts FROM message WHERE ts = :ts", ts=back)
    assert kept["message"] == 2 and kept["memory"] == 2  # what was kept stays for now
    assert soon.total == 0 and memories_soon == kept
    assert later.counts["memories"] == 2 and memories_later == 0
    assert later.counts["messages"] == 2  # expired by then, like every other
    assert stored_back == [{"ts": back}]


async def test_uninstalled_tomo_stops_every_timer_deletes_everything_and_stays_silent(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    now = time.time() - 60
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await seed(tomo, "C1", now, 0)
        await seed(tomo, "C2", now, 10)
        await tomo.message("is anyone there?", channel="C1")
        asked = await tomo.message("<@UBOT> and you?", channel="C2", kind="app_mention")
        await wait_for(lambda: replied(tomo, slack, "C2", asked), what="the reply to finish")
        await tomo.runtime.timers.set(
            JobKind.REPLY, channel="C1", thread_ts="", run_at=time.time() + 60, latest_ts="1.0"
        )
        uninstalled = int(time.time())
        uninstall = {"type": "app_uninstalled"}
        assert (await tomo.event(uninstall, event_time=uninstalled)).status_code == 200
        await wait_for(lambda: erased(tomo), timeout=30, what="the erasure")
        left = await counts(tomo)
        others = await tomo.rows("SELECT count(*) AS n FROM channel")
        people = await tomo.rows("SELECT count(*) AS n FROM person")
        timers = await tomo.timers("judgment", "reply")
        checking = [t for t in tomo.runtime.background if t.get_name() == "slack-check"]
        slack_calls, model_calls = len(slack.calls), len(model.requests)
        # Nothing more: a message is not stored, the periodic jobs call no one.
        # (A late retry of an event from before the uninstall: one after it would prove the
        # app installed again, tests/retention/test_reinstall.py.)
        await tomo.message(
            "<@UBOT> hello?", channel="C1", kind="app_mention", event_time=uninstalled - 1
        )
        for kind in (JobKind.MEMORY, JobKind.DIRECTORY):
            job: Any = tomo.memory_timers.scheduler.get_job(str(kind))
            await job.args[0]()
        after = await counts(tomo)
    assert left == {table: 0 for table in TABLES}
    assert others == [{"n": 0}] and people == [{"n": 0}]
    assert timers == [] and checking == []
    assert after == left
    assert len(slack.calls) == slack_calls and len(model.requests) == model_calls


async def test_after_an_uninstall_a_refused_token_is_tried_once_and_a_new_one_welcomes_back(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    async with start_tomo() as tomo:
        assert (await tomo.event({"type": "app_uninstalled"})).status_code == 200
        await wait_for(lambda: erased(tomo), timeout=30, what="the erasure")
    slack.reset()
    slack.fail("auth.test", error="account_inactive", times=100)
    async with start_tomo(wait_identity=False) as tomo:
        await wait_for(lambda: slack.calls_to("auth.test"), timeout=10, what="auth.test")
        start_up = [t for t in tomo.runtime.background if t.get_name() == "identity"]
        await wait_for(lambda: all(t.done() for t in start_up), timeout=10, what="start-up")
        calls = [method for method, _ in slack.calls]
    assert calls == ["auth.test"]  # nothing else, and no retry loop
    slack.reset()  # the app installed again: its new token works
    async with start_tomo() as tomo:
        await wait_for(lambda: _no_erasure(tomo), timeout=10, what="the erasure lifted")
        ts = await tomo.message("hello again")
        stored = await tomo.rows("SELECT ts FROM message")
    assert stored == [{"ts": ts}]


async def _no_erasure(tomo: Tomo) -> bool:
    return await tomo.rows("SELECT * FROM erasure") == []


async def test_a_deletion_cut_short_resumes_at_the_next_start(start_tomo: StartTomo) -> None:
    """A process stopped mid-deletion: the record committed with the event is still there,
    undone. The next start stops the channel's timers before they start (recovery would owe
    it a judgment) and deletes the rest."""
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("still owed a judgment", channel="C1")
        await tomo.message("also owed one", channel="C2")
        await seed(tomo, "C1", time.time() - 60, 0)
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(
                sql(
                    "INSERT INTO erasure (scope, target, reason, requested_at) "
                    "VALUES ('channel', 'C1', 'deleted', :now)"
                ),
                {"now": time.time()},
            )
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        # Served only once no prompt can see half of it: its timers and memories are gone.
        timers = [t.channel for t in await tomo.timers("judgment")]
        memories_at_start = await tomo.rows("SELECT * FROM memory")
        await wait_for(lambda: erased(tomo), timeout=30, what="the erasure to resume")
        c1 = await tomo.rows("SELECT ts FROM message WHERE channel = 'C1'")
        memories = await tomo.rows("SELECT * FROM memory")
    assert timers == ["C2"] and memories_at_start == []
    assert c1 == [] and memories == []


async def test_another_bots_token_revoked_changes_nothing(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("hello", channel="C1")
        revoked = {"type": "tokens_revoked", "tokens": {"oauth": ["U1"], "bot": ["UOTHER"]}}
        assert (await tomo.event(revoked)).status_code == 200
        after = await tomo.message("still here", channel="C1")
        erasures = await tomo.rows("SELECT * FROM erasure")
        stored = await tomo.rows("SELECT ts FROM message WHERE ts = :ts", ts=after)
        timers = await tomo.timers("judgment")
    assert erasures == [] and stored == [{"ts": after}] and len(timers) == 1
