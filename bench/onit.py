"""On it: from a mention's acknowledgement to tomo's "on it" sign, and to its posted reply.

    .venv/bin/python -m bench.onit            # 5 starts, 40 mentions after each
    .venv/bin/python -m bench.onit --quick    # 3 starts, 15 mentions after each

tomo runs as `uvicorn app.main:app` (the Procfile's flags, the job worker process by default,
SQLite) against Slack and model stand-ins that answer at once (bench/standins.py, which notes
when each sign and post arrives). After each start, as soon as /healthz answers, a first
mention is sent (its reply waits for a job worker that may still be importing LiteLLM; its sign
must not), then more mentions at `--interval`, each a new top-level mention (app_mention and
message, as Slack sends them). Each is timed from the moment its acknowledgement (the 200 of
its first delivery) arrived here to the arrival at the stand-in of the sign
(assistant.threads.setStatus, or reactions.add) and of the reply (chat.postMessage in its
thread, or chat.startStream where it is streamed). Target: the sign p50 ≤ 100 ms, p99 ≤
300 ms, the first mention after a start included.
Last line: `onit p50_ms=X p99_ms=Y first_max_ms=Z reply_p50_ms=R`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import (
    UVICORN_FLAGS,
    free_port,
    load_after,
    machine,
    percentile,
    running,
    tomo_env,
    uvicorn,
    wait_ready,
)
from bench.events import mention
from bench.loadgen import Connection
from bench.standins import POSTS

SIGNS = ("assistant.threads.setStatus", "reactions.add")
_base = int(time.time()) - 60


def recorded(standins: int) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{standins}/calls", timeout=5) as answer:
        return list(json.load(answer)["calls"])


async def acknowledge(
    port: int, channel: str, ts: str, *, clock: Callable[[], float] = time.time
) -> float:
    """Deliver the mention as Slack does; the `clock` time its first 200 arrived."""
    connection = Connection("127.0.0.1", port, "/slack/events")
    try:
        first, second = mention(channel, ts)
        status = await connection.post(first.body)
        acknowledged = clock()
        await connection.post(second.body)
    finally:
        await connection.close()
    if status != 200:
        raise RuntimeError(f"the mention was answered {status}")
    return acknowledged


class Tally:
    def __init__(self) -> None:
        self.acks: dict[tuple[str, str], float] = {}
        self.signs: dict[tuple[str, str], float] = {}
        self.posts: dict[tuple[str, str], float] = {}
        self.first: list[tuple[str, str]] = []

    def note(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            key = (str(call["channel"]), str(call["ts"]))
            if call["method"] in SIGNS and call.get("status") != "":
                self.signs.setdefault(key, call["at"])
            elif call["method"] in POSTS:
                self.posts.setdefault(key, call["at"])

    def waits(
        self, found: dict[tuple[str, str], float], keys: Sequence[tuple[str, str]]
    ) -> list[float]:
        return [(found[key] - self.acks[key]) * 1e3 for key in keys if key in found]

    def missing(self) -> int:
        return sum(1 for key in self.acks if key not in self.signs or key not in self.posts)


async def one_life(
    args: argparse.Namespace, env: dict[str, str], log: Path, tally: Tally, life: int
) -> None:
    port = free_port()
    with running(uvicorn("app.main:app", port=port, env=env, log=log)) as tomo:
        wait_ready(tomo, f"http://127.0.0.1:{port}/healthz")
        keys = []
        for n in range(args.mentions):
            key = (f"C{life:02d}{n:03d}", f"{_base}.{life * 1000 + n:06d}")
            tally.acks[key] = await acknowledge(port, *key)
            keys.append(key)
            if n == 0:
                tally.first.append(key)
            await asyncio.sleep(args.interval)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            tally.note(recorded(args.standins))
            if all(k in tally.signs and k in tally.posts for k in keys):
                break
            await asyncio.sleep(0.2)


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: none"
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    return f"{name}: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {max(values):.0f} ms ({len(values)})"


async def main(args: argparse.Namespace) -> None:
    print(machine())
    print(f"uvicorn flags (the Procfile's, plus no access log): {' '.join(UVICORN_FLAGS)}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-onit-"))
    args.standins = free_port()
    plain = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    standins = uvicorn("bench.standins:app", port=args.standins, env=plain, log=workdir / "s.log")
    tally = Tally()
    with running(standins):
        wait_ready(standins, f"http://127.0.0.1:{args.standins}/api/auth.test")
        url = f"http://127.0.0.1:{args.standins}"
        env = tomo_env(
            database_url=f"sqlite:///{workdir / 'tomo.db'}",
            slack_url=f"{url}/api/",
            model_url=f"{url}/v1",
        )
        for life in range(args.starts):
            await one_life(args, env, workdir / "tomo.log", tally, life)
    everyone = list(tally.acks)
    later = [key for key in everyone if key not in tally.first]
    signs, replies = tally.waits(tally.signs, everyone), tally.waits(tally.posts, everyone)
    first_signs = tally.waits(tally.signs, tally.first)
    print(f"{args.starts} starts x {args.mentions} mentions, {args.interval * 1e3:.0f} ms apart")
    print(summary("on it, first mention after a start", first_signs))
    print(summary("reply, first mention after a start", tally.waits(tally.posts, tally.first)))
    print(summary("on it, later mentions", tally.waits(tally.signs, later)))
    print(summary("reply, later mentions", tally.waits(tally.posts, later)))
    print(summary("on it, all mentions", signs))
    print(summary("reply, all mentions", replies))
    print(f"mentions without a sign or a reply: {tally.missing()} (logs in {workdir})")
    print(load_after())
    print(
        f"onit p50_ms={percentile(signs, 0.5):.0f} p99_ms={percentile(signs, 0.99):.0f} "
        f"first_max_ms={max(first_signs, default=float('nan')):.0f} "
        f"reply_p50_ms={percentile(replies, 0.5):.0f}"
    )


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--mentions", type=int, default=40, help="mentions after each start")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between mentions")
    parser.add_argument("--quick", action="store_true", help="3 starts, 15 mentions each")
    args = parser.parse_args(argv)
    if args.quick:
        args.starts, args.mentions = 3, 15
    return args


def run() -> None:
    asyncio.run(main(parse()))


if __name__ == "__main__":
    run()
