"""How late timers fire in each backend, and how many due judgments a fleet runs per second.

    .venv/bin/python -m bench.timers [--timers 300] [--conversations 200]

Needs PostgreSQL: TOMO_BENCH_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test)
names a server where a scratch database is created for each part and dropped after.

1. Lateness. `--timers` judgment timers due at random moments over the next few seconds are
   set through app.jobs.backend's interface in this process, for `apscheduler` (in memory) and
   for `procrastinate` (one worker on PostgreSQL); the handler notes when it ran. Printed: the
   p50, p99 and largest lateness (ran minus due) per backend.
2. Fleet. `--conversations` conversations (a channel's top level, or a thread) each get one
   person's message through `uvicorn app.main:app` with JOB_BACKEND=procrastinate, which then
   stops (SIGTERM): their judgment timers wait in the database. Once all are due, a fleet of 1,
   then of 2 instances (started together, jobs in their job worker processes, as deployed)
   runs them against the model stand-in (bench/standins.py, its own process, answering at
   once, "stay quiet"). Printed: judgments per second from the fleet's first judgment call to
   its last, and that every conversation was judged once.

Last line: `timers apscheduler_p99_ms=X procrastinate_p99_ms=Y fleet1_jps=A fleet2_jps=B`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.db.engine import create_engine as create_async_engine
from app.db.migrate import upgrade_to_head
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.jobs.timers import Timers
from bench.common import (
    HOST,
    Scratch,
    free_port,
    machine,
    percentile,
    running,
    stop,
    tomo_env,
    uvicorn,
    wait_ready,
)
from bench.events import Delivery, plain, sign

CHANNELS = 100  # the stand-in's channels (bench/standins.py)
WAIT = 4.0  # MIN_WAIT_SECONDS of the fleet part: every message is in before the first is due


# -- 1. lateness --------------------------------------------------------------------------------


async def lateness(backend: str, count: int) -> list[float]:
    """Milliseconds each of `count` timers ran after its time."""
    with Scratch(backend) as scratch:
        timers: TimerBackend
        if backend == "apscheduler":
            timers = Timers()
        else:
            from app.jobs.database_timers import DatabaseTimers

            engine = create_async_engine(scratch.url)
            await upgrade_to_head(engine)
            await engine.dispose()
            timers = DatabaseTimers(scratch.url, stalled_seconds=30)
        late: list[float] = []
        done = asyncio.Event()

        async def judge(**details: Any) -> None:
            late.append((time.time() - float(details["due"])) * 1e3)
            if len(late) == count:
                done.set()

        timers.handle(JobKind.JUDGMENT, judge)
        await timers.start()
        try:
            rng = random.Random(7)
            start = time.time() + 1.0
            for n in range(count):
                due = start + rng.uniform(0, 5)
                await timers.set(
                    JobKind.JUDGMENT,
                    channel=f"C{n:04d}",
                    thread_ts="",
                    run_at=due,
                    latest_ts=f"1.{n:06d}",
                    due=due,
                )
            await asyncio.wait_for(done.wait(), 60)
        finally:
            await timers.stop()
    return late


# -- 2. fleet -----------------------------------------------------------------------------------


def deliveries(count: int) -> list[Delivery]:
    """One message in each of `count` conversations: channels' top levels first, then threads
    under an earlier message of theirs."""
    base = int(time.time()) - 60
    out = []
    for n in range(count):
        channel = f"C{n % CHANNELS:04d}"
        ts = f"{base}.{n + 1:06d}"
        parent = None if n < CHANNELS else f"{base - 100}.{n:06d}"
        out.append(plain(channel, ts, thread_ts=parent))
    return out


def send(port: int, delivery: Delivery) -> None:
    stamp, signature = sign(delivery.body)
    request = urllib.request.Request(
        f"http://{HOST}:{port}/slack/events",
        data=delivery.body,
        headers={
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
        },
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def calls(standins: int) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"http://{HOST}:{standins}/calls", timeout=5) as answer:
        return list(json.load(answer)["calls"])


def fleet(size: int, conversations: int, standins: int, logs: Path) -> tuple[float, int, int]:
    """(judgments per second, judgments run, conversations judged) for a fleet of `size`."""
    with Scratch(f"fleet{size}") as scratch:
        env = tomo_env(
            database_url=scratch.url,
            slack_url=f"http://{HOST}:{standins}/api/",
            model_url=f"http://{HOST}:{standins}/v1",
            JOB_BACKEND="procrastinate",
            MIN_WAIT_SECONDS=str(WAIT),
            JITTER_RATIO="0",
            LOG_LEVEL="WARNING",
        )
        port = free_port()
        with running(uvicorn("app.main:app", port=port, env=env, log=logs / "intake.log")) as one:
            wait_ready(one, f"http://{HOST}:{port}/healthz")
            sent = time.time()
            for delivery in deliveries(conversations):
                send(port, delivery)
            stop(one)  # the timers stay in the database
        time.sleep(max(0.0, sent + WAIT + 1 - time.time()))  # every judgment is due now
        calls(standins)  # forget what came before
        instances = []
        for n in range(size):
            port = free_port()
            process = uvicorn("app.main:app", port=port, env=env, log=logs / f"fleet{size}-{n}.log")
            instances.append((process, port))
        try:
            deadline = time.time() + 120
            judged: list[float] = []
            while time.time() < deadline:
                judged += [c["at"] for c in calls(standins) if c["method"] == "judgment"]
                waiting = scratch.count("SELECT count(*) FROM procrastinate_jobs")
                if len(judged) >= conversations and waiting <= 4:  # the periodic jobs
                    break
                time.sleep(0.2)
            time.sleep(1.0)
            judged += [c["at"] for c in calls(standins) if c["method"] == "judgment"]
        finally:
            for process, _port in instances:
                stop(process)
        decided = scratch.count("SELECT count(DISTINCT (channel, thread_ts)) FROM judgment")
    span = max(judged) - min(judged) if len(judged) > 1 else float("nan")
    return (len(judged) - 1) / span, len(judged), decided


def main(args: argparse.Namespace) -> None:
    print(machine())
    figures: dict[str, float] = {}
    for backend in ("apscheduler", "procrastinate"):
        late = asyncio.run(lateness(backend, args.timers))
        p50, p99 = percentile(late, 0.5), percentile(late, 0.99)
        figures[f"{backend}_p99_ms"] = p99
        print(
            f"{backend:>13}: {len(late)} timers over 5 s, late by p50 {p50:.1f} ms, "
            f"p99 {p99:.1f} ms, max {max(late):.1f} ms"
        )
    standins_port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        standins = uvicorn(
            "bench.standins:app", port=standins_port, env=dict(os.environ), log=logs / "s.log"
        )
        with running(standins):
            wait_ready(standins, f"http://{HOST}:{standins_port}/calls")
            for size in (1, 2):
                rate, judged, decided = fleet(size, args.conversations, standins_port, logs)
                figures[f"fleet{size}_jps"] = rate
                print(
                    f"fleet of {size}: {args.conversations} due judgments, {judged} model calls, "
                    f"{decided} conversations decided, {rate:.1f} judgments/s"
                )
    print("timers " + " ".join(f"{name}={value:.1f}" for name, value in figures.items()))


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timers", type=int, default=300)
    parser.add_argument("--conversations", type=int, default=200)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse())
