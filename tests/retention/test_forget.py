"""`/tomo forget` deletes the channel's stored messages from before that moment, with what was
read of their files, and says how many (docs/data-and-privacy.md); a forget cut short is
finished by the purge."""

from __future__ import annotations

import time

from sqlalchemy import text as sql

from tests.conftest import StartTomo, later_ts
from tests.fakes.response_url import FakeResponseUrl
from tests.retention.stored import put_message, ts_at
from tests.slash import run_command

PDF = [{"id": "F1", "name": "plan.pdf", "mimetype": "application/pdf", "text": "the secret plan"}]


async def test_forget_deletes_the_channels_earlier_messages_and_says_how_many(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    now = time.time() - 60
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await put_message(tomo, channel="C1", ts=ts_at(now, 1), text="hello")
        await put_message(tomo, channel="C1", ts=ts_at(now, 2), text="[file: plan.pdf]", files=PDF)
        parent = ts_at(now, 1)
        await put_message(tomo, channel="C1", ts=ts_at(now, 3), text="reply", thread_ts=parent)
        await put_message(tomo, channel="C2", ts=ts_at(now, 4), text="elsewhere")
        answer = await run_command(tomo, "forget", response_url=hooks.new_url())
        # Written after the forget (next_ts runs 5 s behind: a message from before it would
        # not be stored, app.gate.rules).
        after = await tomo.message("a new start", ts=later_ts())
        rows = await tomo.rows("SELECT channel, text, files FROM message ORDER BY ts")
    assert "deleted the 3 messages written here before now" in answer["text"]
    assert "their 1 file" in answer["text"]
    assert [(r["channel"], r["text"]) for r in rows] == [("C2", "elsewhere"), ("C1", "a new start")]
    assert all(r["files"] is None for r in rows)
    assert after


async def test_a_forget_cut_short_is_finished_by_the_purge(start_tomo: StartTomo) -> None:
    """The forget's moment is recorded first; its messages are deleted a batch at a time. A
    process stopped between the two leaves messages the next purge deletes."""
    now = time.time() - 60
    async with start_tomo(MESSAGE_RETENTION_DAYS=0) as tomo:
        for n in range(3):
            await put_message(tomo, channel="C1", ts=ts_at(now, n), text=f"before {n}")
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(
                sql(
                    "INSERT INTO channel_control (channel, mode, changed_by, changed_at, "
                    "forgotten_at, forgotten_by) VALUES ('C1', 'normal', '', 0, :at, 'U1')"
                ),
                {"at": now + 1},
            )
        purged = await tomo.runtime.purge.run()
        rows = await tomo.rows("SELECT text FROM message")
    assert purged.counts == {"forgotten": 3}
    assert rows == []
