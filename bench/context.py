"""Building the judgment context for one conversation in a large database.

    .venv/bin/python -m bench.context                      # 100 channels x 10,000 messages
    .venv/bin/python -m bench.context --database /tmp/c.db # keep the database for next time

The database gets tomo's real schema (Alembic), 100 channels with 10,000 messages each (a
third of them thread replies), 200 people, and memories: the workspace's short and long term,
each channel's short and long term, and 20 thread summaries per channel. Each build is
`ContextBuilder.build` for a thread in a different channel, in a fresh session, through the
app's own async engine; SQL statements are counted with a before_cursor_execute listener.
A second, small database (10 channels x 1,000 messages) shows the count does not depend on
the number of channels. Last line: `context median_ms=X.X statements=N`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import event

from app.context.builder import ContextBuilder, Persona
from app.db.engine import create_engine, session_factory, sqlite_reader
from app.db.migrate import upgrade_to_head
from app.slack.identity import Me
from bench.common import PublicScopes, machine, median, percentile

PEOPLE = 200
THREAD_SUMMARIES = 20  # per channel


def _messages(channel: str, count: int, start: float, rng: random.Random) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    threads: list[str] = []  # one top-level message in ten gets replies
    step = 30 * 86400 / count  # a month of messages, the newest a minute ago
    for n in range(count):
        created = start + n * step
        ts = f"{created:.6f}"
        thread = rng.choice(threads[-3:]) if threads and rng.random() < 0.33 else ""
        if not thread and rng.random() < 0.1:
            threads.append(ts)
        user = f"U{rng.randrange(PEOPLE):04d}"
        words = ("lunch", "deploy", "review", "ok", "thanks")
        text = " ".join(rng.choice(words) for _ in range(12))
        rows.append((channel, ts, "T0001", thread, thread, "judgment", user, text, created))
    return rows


def populate(path: Path, *, channels: int, per_channel: int) -> None:
    """tomo's schema, then the rows, written with sqlite3 directly (it is only set-up)."""
    engine = create_engine(f"sqlite:///{path}")
    asyncio.run(_upgrade(engine))
    rng = random.Random(7)
    now = time.time()
    start = now - 30 * 86400 - 60
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, updated_at)"
            " VALUES (?, 'T0001', ?, 0, 0, 1, ?)",
            [(f"C{c:04d}", f"channel-{c}", now) for c in range(channels)],
        )
        db.executemany(
            "INSERT INTO person (id, team_id, name, display_name, real_name, is_bot, fetched_at)"
            " VALUES (?, 'T0001', ?, ?, ?, 0, ?)",
            [(f"U{p:04d}", f"p{p}", f"Person {p}", f"Person {p}", now) for p in range(PEOPLE)],
        )
        memories: list[tuple[Any, ...]] = [
            ("workspace", "", kind, "what the workspace talks about " * 20, f"{now:.6f}")
            for kind in ("short_term", "long_term")
        ]
        for c in range(channels):
            channel = f"C{c:04d}"
            rows = _messages(channel, per_channel, start, rng)
            db.executemany(
                "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route,"
                " user_id, bot_id, text, subtype, channel_type, created_at, edited_at, deleted)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, NULL, 'channel', ?, NULL, 0)",
                rows,
            )
            newest = rows[-1][1]
            memories += [
                ("channel", channel, kind, f"what {channel} remembers " * 30, newest)
                for kind in ("short_term", "long_term")
            ]
            threads = sorted({r[3] for r in rows if r[3]})[-THREAD_SUMMARIES:]
            memories += [
                ("thread", f"{channel}:{t}", "summary", "a thread about lunch " * 10, newest)
                for t in threads
            ]
        db.executemany(
            "INSERT INTO memory (scope, scope_id, kind, content, source_ts, updated_at, model)"
            f" VALUES (?, ?, ?, ?, ?, {now}, 'bench')",
            memories,
        )
    asyncio.run(engine.dispose())


async def _upgrade(engine: Any) -> None:
    await upgrade_to_head(engine)


def conversations(path: Path, count: int) -> list[tuple[str, str]]:
    """(channel, thread_ts) of a recent thread, a different channel each time round."""
    with sqlite3.connect(path) as db:
        channels = [row[0] for row in db.execute("SELECT id FROM channel ORDER BY id")]
        picked = []
        for n in range(count):
            channel = channels[n % len(channels)]
            (thread,) = db.execute(  # the longest of the channel's 30 latest threads
                "SELECT thread_ts FROM (SELECT thread_ts, count(*) AS n FROM message"
                " WHERE channel = ? AND thread_ts != '' GROUP BY thread_ts"
                " ORDER BY thread_ts DESC LIMIT 30) ORDER BY n DESC LIMIT 1",
                (channel,),
            ).fetchone()
            picked.append((channel, thread))
    return picked


async def measure(path: Path, builds: int) -> tuple[list[float], list[int], int]:
    """(milliseconds per build, statements per build, messages in the context)."""
    engine = create_engine(f"sqlite:///{path}")
    sessions = session_factory(engine)
    builder = ContextBuilder(
        persona=Persona("tomo", "a friend"),
        channel_messages_limit=50,
        thread_memory_days=7,
        active_channel_days=7,
        scopes=PublicScopes(),
        reader=sqlite_reader(engine),  # as app.wiring.core builds it
    )
    statements = 0

    def count(*_args: Any) -> None:
        nonlocal statements
        statements += 1

    for executing in (engine.sync_engine, builder.reader):
        if executing is not None:
            event.listen(executing, "before_cursor_execute", count)
    me = Me(user_id="UBOT", bot_id="BBOT")
    targets = conversations(path, builds + 5)
    times: list[float] = []
    counts: list[int] = []
    size = 0
    for n, (channel, thread_ts) in enumerate(targets):
        statements = 0
        started = time.perf_counter()
        async with sessions() as session:
            context = await builder.build(session, channel_id=channel, thread_ts=thread_ts, me=me)
        elapsed = (time.perf_counter() - started) * 1000
        if n >= 5:  # the first few warm the connection pool and SQLAlchemy's statement cache
            times.append(elapsed)
            counts.append(statements)
        size = len(context.target_messages())
    builder.close()
    await engine.dispose()
    return times, counts, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--messages", type=int, default=10_000, help="per channel")
    parser.add_argument("--builds", type=int, default=50)
    parser.add_argument("--database", type=Path, help="reuse (or create and keep) this file")
    args = parser.parse_args()
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-context-"))
    big = args.database or workdir / "big.db"
    if not big.exists():
        started = time.perf_counter()
        populate(big, channels=args.channels, per_channel=args.messages)
        print(f"populated {big} in {time.perf_counter() - started:.0f} s")
    small = workdir / "small.db"
    populate(small, channels=10, per_channel=1_000)

    times, counts, size = asyncio.run(measure(big, args.builds))
    _, small_counts, _ = asyncio.run(measure(small, 10))
    with sqlite3.connect(big) as db:
        (messages,) = db.execute("SELECT count(*) FROM message").fetchone()
        (memories,) = db.execute("SELECT count(*) FROM memory").fetchone()
    print(
        f"{messages} messages, {memories} memories: {len(times)} builds, median "
        f"{median(times):.1f} ms, p90 {percentile(times, 0.9):.1f} ms, max {max(times):.1f} ms; "
        f"{size} messages in the target conversation"
    )
    print(
        f"statements per build: {sorted(set(counts))} with {args.channels} channels, "
        f"{sorted(set(small_counts))} with 10 channels"
    )
    print(f"context median_ms={median(times):.1f} statements={max(counts)}")


if __name__ == "__main__":
    main()
