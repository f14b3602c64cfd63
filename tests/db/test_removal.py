"""Removals (app.db.removal): a deletion is noted whether or not tomo had the message, and the
lookup of which messages were deleted finds each of many, in parts on SQLite."""

from __future__ import annotations

import time

from sqlalchemy import insert

from app.db.models import Message
from app.db.removal import SQLITE_PAIRS, remove_messages, removed_among
from tests.conftest import StartTomo


async def test_every_deletion_is_noted_and_found_among_many(start_tomo: StartTomo) -> None:
    base = int(time.time()) - 600
    stamps = [f"{base}.{n:06d}" for n in range(2 * SQLITE_PAIRS + 50)]
    had = stamps[::3]  # tomo had a third of them
    async with start_tomo() as tomo:
        async with tomo.runtime.engine.begin() as connection:
            rows = [{"channel": "C1", "ts": ts, "text": "x", "created_at": float(ts)} for ts in had]
            await connection.execute(insert(Message), rows)
            gone = await connection.run_sync(
                lambda sync: remove_messages(sync, "C1", stamps[: SQLITE_PAIRS + 10], now=1.0)
            )
        asked = [("C1", ts) for ts in stamps] + [("C2", ts) for ts in stamps[:5]]
        async with tomo.runtime.engine.connect() as connection:
            found = await connection.run_sync(lambda sync: removed_among(sync, asked))
        noted = await tomo.rows("SELECT ts, removed_at FROM removal")
    deleted = stamps[: SQLITE_PAIRS + 10]
    assert gone == len([ts for ts in had if ts in deleted])
    assert found == {("C1", ts) for ts in deleted}
    by_ts = {r["ts"]: r["removed_at"] for r in noted}
    assert by_ts == {ts: (1.0 if ts in had else 0.0) for ts in deleted}
