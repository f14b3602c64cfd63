"""Acknowledgement throughput and latency: tomo (database and timers for real) against Bolt.

    .venv/bin/python -m bench.ack            # 20,000 requests each, then 200 req/s for 10 s
    .venv/bin/python -m bench.ack --quick    # 3,000 requests each, then 200 req/s for 3 s

Both servers run as `uvicorn` subprocesses on 127.0.0.1 with the same flags and receive the
same signed bodies over the same number of connections from this process. tomo uses a SQLite
file and its real scheduler; MIN_WAIT_SECONDS is ten hours so no judgment fires, and Slack and
the model are stand-ins on 127.0.0.1 (bench/standins.py), so the replies that mentions schedule
run against them. At the end every acknowledged event is looked up in tomo's database.
Last line: `ack ratio_vs_bolt=X.XX p99_ms_at_fixed_rate=Y.Y lost=N`.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench import loadgen
from bench.common import (
    SECRET,
    cpu_seconds,
    free_port,
    machine,
    percentile,
    running,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)
from bench.events import Delivery, Workspace


def _summary(name: str, result: loadgen.Result, cpu: float | None = None) -> str:
    statuses = Counter(result.statuses)
    others = {s: n for s, n in statuses.items() if s != 200}
    line = (
        f"{name:<6} {result.rate:8.0f} req/s  p50 {percentile(result.latencies, 0.5) * 1000:6.1f}"
        f" ms  p99 {percentile(result.latencies, 0.99) * 1000:6.1f} ms  "
        f"({result.answered} answered in {result.elapsed:.2f} s"
    )
    if cpu is not None:
        line += (
            f", server CPU {cpu / result.elapsed:.0%} of a core,"
            f" {cpu / max(1, result.answered) * 1e6:.0f} µs a request"
        )
    return line + (f", non-200: {others})" if others else ")")


def _lost(database: Path, deliveries: Sequence[Delivery], statuses: Sequence[int]) -> int:
    """Acknowledged deliveries whose event id or message is missing from tomo's database."""
    with sqlite3.connect(database) as db:
        seen = {row[0] for row in db.execute("SELECT event_id FROM seen_event")}
        messages = set(db.execute("SELECT channel, ts FROM message"))
    return sum(
        1
        for delivery, status in zip(deliveries, statuses, strict=True)
        if status == 200
        and (delivery.event_id not in seen or (delivery.channel, delivery.ts) not in messages)
    )


async def _measure(
    port: int, pid: int, warm: list[Delivery], measured: list[Delivery], connections: int
) -> tuple[loadgen.Result, float]:
    await loadgen.saturate(port, warm, connections=connections)
    wait_idle(pid)
    before, client = cpu_seconds(pid), time.process_time()
    result = await loadgen.saturate(port, measured, connections=connections)
    print(f"  (load generator CPU {(time.process_time() - client) / result.elapsed:.0%} of a core)")
    return result, cpu_seconds(pid) - before


async def main(args: argparse.Namespace) -> int:
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-ack-"))
    workspace = Workspace(mentions=args.mentions)
    warm = workspace.deliveries(args.warmup)
    measured = workspace.deliveries(args.requests)
    steady = workspace.deliveries(int(args.rate * args.seconds))
    kinds = Counter(d.kind for d in measured)
    print(f"{len(measured)} signed deliveries, {args.connections} connections; mix {dict(kinds)}")

    standins_port = free_port()
    standins = uvicorn(
        "bench.standins:app", port=standins_port, env={**_base_env()}, log=workdir / "standins.log"
    )
    with running(standins):
        wait_ready(standins, f"http://127.0.0.1:{standins_port}/api/auth.test")
        slack_url = f"http://127.0.0.1:{standins_port}/api/"

        port = free_port()
        env = {**_base_env(), "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack_url}
        with running(
            uvicorn("bench.bolt_app:api", port=port, env=env, log=workdir / "bolt.log")
        ) as bolt:
            wait_ready(bolt, f"http://127.0.0.1:{port}/healthz")
            bolt_result, bolt_cpu = await _measure(port, bolt.pid, warm, measured, args.connections)
        print(_summary("bolt", bolt_result, bolt_cpu))

        port = free_port()
        database = workdir / "tomo.db"
        env = tomo_env(
            database_url=f"sqlite:///{database}",
            slack_url=slack_url,
            model_url=f"http://127.0.0.1:{standins_port}/v1",
        )
        with running(uvicorn("app.main:app", port=port, env=env, log=workdir / "tomo.log")) as tomo:
            wait_ready(tomo, f"http://127.0.0.1:{port}/healthz")
            wait_idle(tomo.pid)  # LiteLLM is imported in the background after start
            tomo_result, tomo_cpu = await _measure(port, tomo.pid, warm, measured, args.connections)
            print(_summary("tomo", tomo_result, tomo_cpu))
            wait_idle(tomo.pid)
            fixed = await loadgen.fixed_rate(
                port, steady, rate=args.rate, connections=args.connections
            )
            print(_summary(f"tomo at {args.rate:.0f} req/s", fixed).replace("  ", " ", 1))
            lost = sum(
                _lost(database, deliveries, result.statuses)
                for deliveries, result in ((measured, tomo_result), (steady, fixed))
            )
    ratio = tomo_result.rate / bolt_result.rate
    acknowledged = sum(s == 200 for s in (*tomo_result.statuses, *fixed.statuses))
    print(
        f"ratio tomo/bolt {ratio:.2f}; {acknowledged} acknowledged events checked in "
        f"{database}: {lost} missing  (logs in {workdir})"
    )
    p99 = percentile(fixed.latencies, 0.99) * 1000
    print(f"ack ratio_vs_bolt={ratio:.2f} p99_ms_at_fixed_rate={p99:.1f} lost={lost}")
    return 0


def _base_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--requests", type=int, help="deliveries per server (default 20000)")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200.0, help="fixed rate, req/s")
    parser.add_argument("--seconds", type=float, help="fixed-rate duration (default 10)")
    parser.add_argument("--mentions", type=float, default=0.03, help="share of mentions")
    args = parser.parse_args(argv)
    args.requests = args.requests or (3000 if args.quick else 20000)
    args.seconds = args.seconds or (3.0 if args.quick else 10.0)
    args.warmup = 500 if args.quick else 2000
    return args


def run() -> None:
    args = parse()
    try:
        import uvloop
    except ImportError:
        raise SystemExit(asyncio.run(main(args))) from None
    raise SystemExit(uvloop.run(main(args)))


if __name__ == "__main__":
    run()
