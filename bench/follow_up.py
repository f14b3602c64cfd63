"""Follow-ups: from a follow-up's acknowledgement to tomo's posted reply.

    .venv/bin/python -m bench.follow_up            # 30 conversations
    .venv/bin/python -m bench.follow_up --quick    # 10

tomo runs as `uvicorn app.main:app` (the Procfile's flags, the job worker process by default,
SQLite) against Slack and model stand-ins that answer at once (bench/standins.py), with
FOLLOW_UP_WAIT_SECONDS=--wait (0.2 s) and MIN_WAIT_SECONDS of ten hours. Each conversation: a
top-level mention, answered in its thread; once tomo's reply is stored, the person writes in
that thread without a mention (a follow-up the model stand-in's judgment answers "respond").
Timed from the moment the follow-up's acknowledgement (its 200) arrived here to the arrival of
tomo's second post in that thread at the stand-in: the follow-up wait, the judgment and the
reply. Target: p50 within FOLLOW_UP_WAIT_SECONDS + 150 ms.
Last line: `follow_up wait_ms=W p50_ms=X p99_ms=Y over_wait_p50_ms=Z`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import (
    UVICORN_FLAGS,
    free_port,
    load_after,
    machine,
    percentile,
    query,
    running,
    tomo_env,
    uvicorn,
    wait_ready,
)
from bench.events import plain
from bench.loadgen import Connection
from bench.onit import acknowledge, recorded
from bench.standins import ANSWER_ME, POSTS


def fresh_ts() -> str:
    """A ts of now: after tomo's own posts (the stand-in stamps them with the time)."""
    return f"{time.time():.6f}"


async def deliver(port: int, body: bytes) -> float:
    """Deliver one event; the wall-clock time its 200 arrived."""
    connection = Connection("127.0.0.1", port, "/slack/events")
    try:
        status = await connection.post(body)
        acknowledged = time.time()
    finally:
        await connection.close()
    if status != 200:
        raise RuntimeError(f"the follow-up was answered {status}")
    return acknowledged


async def posts_in(standins: int, channel: str, thread: str, count: int, seen: list[dict]) -> float:
    """Wait until `count` posts reached the stand-in in the thread; when the last arrived."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        seen.extend(recorded(standins))
        found = [
            c["at"]
            for c in seen
            if c["method"] in POSTS and (c["channel"], c["ts"]) == (channel, thread)
        ]
        if len(found) >= count:
            return float(found[count - 1])
        await asyncio.sleep(0.02)
    raise RuntimeError(f"no post number {count} in {channel} {thread} within 60 s")


async def conversation(
    port: int, standins: int, database_url: str, channel: str, seen: list[dict]
) -> float:
    """A mention, its reply, then a follow-up: milliseconds from the follow-up's ack to the
    follow-up's reply."""
    thread = fresh_ts()
    await acknowledge(port, channel, thread)
    await posts_in(standins, channel, thread, 1, seen)
    sql = "SELECT count(*) FROM message WHERE channel = :c AND thread_ts = :t AND user_id = 'UBOT'"
    deadline = time.monotonic() + 30
    while not query(database_url, sql, c=channel, t=thread)[0][0]:
        if time.monotonic() > deadline:
            raise RuntimeError("tomo's reply was not stored")
        await asyncio.sleep(0.02)
    said = plain(channel, fresh_ts(), thread_ts=thread, text=f"and for six people? {ANSWER_ME}")
    acknowledged = await deliver(port, said.body)
    replied = await posts_in(standins, channel, thread, 2, seen)
    return (replied - acknowledged) * 1e3


async def main(args: argparse.Namespace) -> None:
    print(machine())
    print(f"uvicorn flags (the Procfile's, plus no access log): {' '.join(UVICORN_FLAGS)}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-follow-up-"))
    standins = free_port()
    plain_env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    helpers = uvicorn("bench.standins:app", port=standins, env=plain_env, log=workdir / "s.log")
    database_url = f"sqlite:///{workdir / 'tomo.db'}"
    waits: list[float] = []
    with running(helpers):
        wait_ready(helpers, f"http://127.0.0.1:{standins}/api/auth.test")
        url = f"http://127.0.0.1:{standins}"
        env = tomo_env(
            database_url=database_url,
            slack_url=f"{url}/api/",
            model_url=f"{url}/v1",
            FOLLOW_UP_WAIT_SECONDS=str(args.wait),
        )
        port = free_port()
        with running(uvicorn("app.main:app", port=port, env=env, log=workdir / "tomo.log")) as tomo:
            wait_ready(tomo, f"http://127.0.0.1:{port}/readyz", timeout=180.0)
            seen: list[dict] = []
            for n in range(args.conversations):
                waits.append(await conversation(port, standins, database_url, f"CF{n:04d}", seen))
    wait_ms = args.wait * 1e3
    p50, p99 = percentile(waits, 0.5), percentile(waits, 0.99)
    print(f"{len(waits)} conversations: mention, reply, follow-up (logs in {workdir})")
    print(
        f"follow-up ack -> its reply posted: p50 {p50:.0f} ms, p99 {p99:.0f} ms, "
        f"min {min(waits):.0f} ms, max {max(waits):.0f} ms; FOLLOW_UP_WAIT_SECONDS {args.wait:g}"
    )
    print(load_after())
    print(
        f"follow_up wait_ms={wait_ms:.0f} p50_ms={p50:.0f} p99_ms={p99:.0f} "
        f"over_wait_p50_ms={p50 - wait_ms:.0f}"
    )


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=30)
    parser.add_argument("--wait", type=float, default=0.2, help="FOLLOW_UP_WAIT_SECONDS")
    parser.add_argument("--quick", action="store_true", help="10 conversations")
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations = 10
    return args


def run() -> None:
    asyncio.run(main(parse()))


if __name__ == "__main__":
    run()
