"""A message Slack deleted is deleted here too: its row goes, with what was read of its files.

What stays is a `removal` row (channel, ts, thread, times; never what the message said), so the
memory job sees that a memory was written from a message that is gone and writes it again
without it (app.memory.sources), and so the message is never stored again: not by a fetch
that raced the deletion, nor by a delivery of the message that comes after its deletion (Slack
retries an event tomo did not acknowledge, and may deliver the `message_deleted` first). A
deletion of a message tomo does not have is noted too, with `removed_at` 0: nothing tomo kept
went, so no memory is written again for it. Removals go with the retention like the
messages."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import chain

from sqlalchemy import delete, select, tuple_
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import TOP_LEVEL, Message, Removal


def remove_messages(
    connection: Connection, channel: str, stamps: Sequence[str], *, now: float
) -> int:
    """Delete these messages of `channel` and note their removal (those tomo did not have as
    well), in the caller's transaction; how many there were."""
    gone = connection.execute(
        delete(Message)
        .where(col(Message.channel) == channel, col(Message.ts).in_(list(stamps)))
        .returning(col(Message.ts), col(Message.thread_ts), col(Message.created_at))
    ).all()
    rows = {
        ts: {"thread_ts": TOP_LEVEL, "created_at": float(ts), "removed_at": 0.0} for ts in stamps
    }
    for ts, thread_ts, created_at in gone:
        rows[ts] = {"thread_ts": thread_ts, "created_at": created_at, "removed_at": now}
    connection.execute(
        upsert(connection.dialect.name, Removal).on_conflict_do_nothing(),
        [{"channel": channel, "ts": ts, **row} for ts, row in rows.items()],
    )
    return len(gone)


# Pairs looked up in one statement on SQLite: its expression tree (an OR of pairs, each found
# by the table's key; a row value IN (VALUES …) scans the table) stays far below its limit.
SQLITE_PAIRS = 200


@functools.lru_cache(maxsize=64)
def _sqlite_removed(pairs: int) -> str:
    """SELECT of the removal rows of `pairs` (channel, ts) pairs, each found by the key."""
    return "SELECT channel, ts FROM removal WHERE " + " OR ".join(["(channel=? AND ts=?)"] * pairs)


def removed_among(
    connection: Connection, keys: Sequence[tuple[str, str]]
) -> frozenset[tuple[str, str]]:
    """Which of these (channel, ts) Slack deleted, as far as tomo knows (a removal row). On
    SQLite SQL text with the values as one flat tuple, as app.recording.ingest's inserts: it runs on
    the acknowledgement's path, where building the statement cost more than running it."""
    if not keys:
        return frozenset()
    if connection.dialect.name == "sqlite":
        wanted = sorted(set(keys))
        found: set[tuple[str, str]] = set()
        for at in range(0, len(wanted), SQLITE_PAIRS):
            part = wanted[at : at + SQLITE_PAIRS]
            rows = connection.exec_driver_sql(_sqlite_removed(len(part)), tuple(chain(*part)))
            found.update((row[0], row[1]) for row in rows)
        return frozenset(found)
    rows = connection.execute(
        select(col(Removal.channel), col(Removal.ts)).where(
            tuple_(col(Removal.channel), col(Removal.ts)).in_(sorted(set(keys)))
        )
    )
    return frozenset((row[0], row[1]) for row in rows)
