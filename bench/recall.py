"""Searching a million stored messages: how long `search_messages`'s query takes, and the index.

    .venv/bin/python -m bench.recall                                   # SQLite, 1,000,000
    .venv/bin/python -m bench.recall --messages 100000                 # a quick run
    .venv/bin/python -m bench.recall --database postgresql://postgres@127.0.0.1/recall

The database gets tomo's schema (Alembic, with the search index of migration 0015), then
bench.recall_corpus's messages (bench.context's month of messages in 100 channels, in English
and Japanese), inserted as tomo inserts them, so the index is built by its triggers on SQLite.
A `--database` that already holds that many messages is searched as it is. Each query kind
below is run `--rounds` times through app.db.search.service, on the app's async engine, as
seen from a public channel (public channels only) and from a DM (plus five private channels),
with and without a channel; p50 and p95 per kind and over all, and beside them the floor: a bare
`SELECT 1` through the same engine (on a busy machine, most of a figure); then what storing
a message costs with the index and without it (bench.recall_insert). Last line:
`recall p50_ms=X p95_ms=Y index_mib=Z`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.db.search.service import Where, search
from app.db.search.terms import terms_of
from app.gate.scope import Scope
from bench.common import machine, median, percentile
from bench.recall_corpus import CHANNELS, channel_id, fill_postgresql, fill_sqlite
from bench.recall_insert import per_message_us

KINDS = {
    "rare word (zebracorn)": ["zebracorn"],
    "made-up word of the long tail": ["karimo", "tosena", "lumovi", "pode", "shaquze"],
    "common word": ["deploy", "release", "meeting"],
    "two words": ["launch date", "customer plan", "fix bug"],
    "Japanese, rare (秘密会議)": ["秘密会議"],
    "Japanese, 3+ characters": ["打ち合わせ", "締め切り", "議事録", "レビュー"],
    "Japanese, 2 characters": ["会議", "予算", "資料", "来週"],
    "a word and a 2-character word": ["deploy ok", "会議 打ち合わせ"],
    "empty query (newest)": [""],
}
# The same engine's round trip with nothing to do: what the machine adds to every figure.
FLOOR = "floor: SELECT 1 on the same engine"
PUBLIC = Scope(conversation="C0000", private=frozenset())
DM = Scope(
    conversation="D0001",
    private=frozenset({"D0001", *(channel_id(n) for n in range(4, 25, 5))}),
)


async def stored(url: str) -> int:
    engine = create_engine(url)
    try:
        await upgrade_to_head(engine)
        async with engine.connect() as connection:
            return int(await connection.scalar(text("SELECT count(*) FROM message")) or 0)
    finally:
        await engine.dispose()


async def index_mib(url: str) -> float:
    engine = create_engine(url)
    sql = (
        "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'message_search%'"
        if url.startswith("sqlite")
        else "SELECT pg_relation_size('ix_message_text_trgm')"
    )
    try:
        async with engine.connect() as connection:
            return float(await connection.scalar(text(sql)) or 0) / 2**20
    finally:
        await engine.dispose()


async def insert_cost(url: str) -> tuple[float, float]:
    engine = create_engine(url)
    try:
        return await per_message_us(engine)
    finally:
        await engine.dispose()


async def measure(url: str, rounds: int) -> dict[str, list[float]]:
    engine = create_engine(url)
    rng = random.Random(11)
    since = time.time() - 30 * 86400
    times: dict[str, list[float]] = {kind: [] for kind in [*KINDS, FLOOR]}
    try:
        for n in range(rounds + 2):
            for kind, queries in KINDS.items():
                scope = PUBLIC if n % 2 else DM
                channel = channel_id(rng.randrange(CHANNELS)) if n % 3 == 0 else None
                if channel is not None and not scope.allows(channel, public=channel[0] == "C"):
                    channel = "C0001"
                where = Where(scope=scope, since=since, channel=channel)
                terms = terms_of(rng.choice(queries))
                started = time.perf_counter()
                async with engine.connect() as connection:
                    await search(connection, terms, where, limit=10)
                if n >= 2:  # the first rounds warm the pool and the statement cache
                    times[kind].append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            async with engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
            times[FLOOR].append((time.perf_counter() - started) * 1000)
    finally:
        await engine.dispose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=40, help="of each query kind")
    parser.add_argument("--database", help="a SQLite or PostgreSQL URL (default: a temp file)")
    args = parser.parse_args()
    print(machine())
    url = args.database or f"sqlite:///{Path(tempfile.mkdtemp(prefix='tomo-recall-')) / 'r.db'}"
    have = asyncio.run(stored(url))
    if have < args.messages:
        started = time.perf_counter()
        if url.startswith("sqlite"):
            fill_sqlite(url.removeprefix("sqlite:///"), args.messages)
        else:
            fill_postgresql(url, args.messages)
        print(f"stored {args.messages} messages in {time.perf_counter() - started:.0f} s")
    have = asyncio.run(stored(url))
    size = asyncio.run(index_mib(url))
    times = asyncio.run(measure(url, args.rounds))
    every: list[float] = []
    print(f"{have} messages, index {size:.0f} MiB ({url.split(':', 1)[0]})")
    for kind, values in times.items():
        every += values if kind != FLOOR else []
        print(
            f"  {kind:34} p50 {median(values):6.1f} ms  p95 {percentile(values, 0.95):6.1f} ms"
            f"  max {max(values):6.1f} ms"
        )
    p50, p95 = median(every), percentile(every, 0.95)
    indexed, plain = asyncio.run(insert_cost(url))
    print(
        f"storing a message: {indexed:.0f} µs with the index, {plain:.0f} µs without "
        f"(statements of 10 rows, as the recorder's group commits)"
    )
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(f"recall p50_ms={p50:.1f} p95_ms={p95:.1f} index_mib={size:.0f}")


if __name__ == "__main__":
    main()
