"""The purge (docs/data-and-privacy.md): what is older than MESSAGE_RETENTION_DAYS goes, at
start-up and on its periodic job, in batches; memories stay; an event about a message older
than the retention is acknowledged and not stored."""

from __future__ import annotations

import time
from typing import Any

from app.jobs.kinds import JobKind
from app.retention import batches
from tests.conftest import StartTomo, wait_for
from tests.fakes import FakeSlack
from tests.retention.stored import (
    DAY,
    counts,
    put_memory,
    put_message,
    put_records,
    ts_at,
)

RETENTION = {"MESSAGE_RETENTION_DAYS": 7, "ACTIVE_CHANNEL_DAYS": 7, "THREAD_MEMORY_DAYS": 7}


async def test_what_is_older_than_the_retention_is_deleted_and_memories_stay(
    start_tomo: StartTomo, monkeypatch: object
) -> None:
    now = time.time()
    old, fresh = now - 8 * DAY, now - 6 * DAY
    async with start_tomo(**RETENTION) as tomo:
        await tomo.runtime.purge.run()  # the start-up one may still be running: let it end
        for n in range(5):  # more than a batch of 2, below
            await put_message(tomo, channel="C1", ts=ts_at(old, n), text=f"old {n}")
            await put_records(tomo, channel="C1", at=old, n=n)
        await put_message(
            tomo,
            channel="C1",
            ts=ts_at(old, 9),
            text="the report [file: q3.pdf]",
            files=[{"id": "F1", "name": "q3.pdf", "text": "revenue fell"}],
        )
        await put_message(tomo, channel="C1", ts=ts_at(fresh), text="still here")
        await put_records(tomo, channel="C1", at=fresh, n=0)
        await put_memory(tomo, scope="channel", scope_id="C1", kind="long_term", content="m")

        batches_seen: list[int] = []
        original = batches._delete_some

        def counting(*args: Any, **kwargs: Any) -> int:
            deleted = original(*args, **kwargs)
            batches_seen.append(deleted)
            return deleted

        monkeypatch.setattr(batches, "_delete_some", counting)  # type: ignore[attr-defined]
        monkeypatch.setattr(batches, "BATCH_ROWS", 2)  # type: ignore[attr-defined]
        monkeypatch.setattr(batches, "MIN_ROWS", 2)  # type: ignore[attr-defined]
        monkeypatch.setattr(batches, "MAX_ROWS", 2)  # type: ignore[attr-defined]
        purged = await tomo.runtime.purge.run()
        left = await counts(tomo)
        texts = [r["text"] for r in await tomo.rows("SELECT text FROM message")]

    assert purged.counts == {
        "messages": 6,
        "decisions": 5,
        "claims": 5,
        "feedback": 5,
        "llm_calls": 5,
        "removals": 5,
    }
    assert texts == ["still here"]  # the read PDF's text went with its message
    assert left == {
        "message": 1,
        "judgment": 1,
        "reply": 1,
        "feedback": 1,
        "llm_call": 1,
        "removal": 1,
        "memory": 1,
    }
    assert max(batches_seen) == 2  # in batches (of 2 here), one commit each


async def test_the_purge_runs_at_start_up_and_is_a_periodic_job(start_tomo: StartTomo) -> None:
    old = time.time() - 8 * DAY
    async with start_tomo(**RETENTION) as tomo:
        await put_message(tomo, channel="C1", ts=ts_at(old), text="left from last month")
        await put_records(tomo, channel="C1", at=old, n=0)
        periodic = [t for t in await tomo.timers() if t.kind is JobKind.PURGE]
        assert periodic and periodic[0].seconds_left is not None
        assert periodic[0].seconds_left <= 3600
    # The next start deletes them, without waiting for the hour.
    async with start_tomo(**RETENTION) as tomo:

        async def purged() -> bool:
            return sum((await counts(tomo)).values()) == 0

        await wait_for(purged, timeout=30, what="the start-up purge")


async def test_no_limit_keeps_everything(start_tomo: StartTomo) -> None:
    old = time.time() - 400 * DAY
    async with start_tomo(MESSAGE_RETENTION_DAYS=0) as tomo:
        await put_message(tomo, channel="C1", ts=ts_at(old), text="from last year")
        await put_records(tomo, channel="C1", at=old, n=0)
        purged = await tomo.runtime.purge.run()
        left = await counts(tomo)
    assert purged.total == 0
    assert left == {t: (0 if t == "memory" else 1) for t in left}


async def test_an_event_about_a_message_older_than_the_retention_is_acknowledged_not_stored(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    old = ts_at(time.time() - 8 * DAY, 1)
    async with start_tomo(**RETENTION) as tomo:
        await tomo.message("<@UBOT> an old mention, delivered late", ts=old)  # asserts the 200
        await tomo.message("hello today")
        stored = [r["text"] for r in await tomo.rows("SELECT text FROM message")]
        timers = await tomo.timers("judgment", "reply")
    assert stored == ["hello today"]
    assert timers and all(t.latest_ts != old for t in timers)
