"""The purge of a large database while acknowledgements go on at a fixed rate.

    .venv/bin/python -m bench.purge                 # 100 channels x 10,000 messages (1 million)
    .venv/bin/python -m bench.purge --per-channel 1000 --seconds 3   # 100,000, a quick look

The database is bench.context's: tomo's schema, a month of messages (a third of them thread
replies), the newest a minute ago, with people and memories. tomo starts on it as a `uvicorn`
subprocess (the Procfile's flags, its job worker process, its real scheduler) with
MESSAGE_RETENTION_DAYS=7, so its start-up purge deletes the older three weeks: about 770,000
messages, a batch at a time. Meanwhile bench.ack's workspace sends signed deliveries at a fixed
rate (200 req/s by default), in windows of --seconds, until tomo logs the purge's end; then
one more window, the control, with nothing purged. Slack and the model are the stand-ins of
bench/standins.py on 127.0.0.1.
Last line: `purge deleted=N seconds=S p99_ms_during=X p99_ms_after=Y`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench import loadgen
from bench.common import (
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
from bench.context import populate
from bench.events import Workspace

PURGED = re.compile(r"purge: deleted (.*) in ([\d.]+) s")


def finished(log: Path) -> re.Match[str] | None:
    for line in log.read_text(errors="replace").splitlines():
        if (found := PURGED.search(line)) and "messages" in found.group(1):
            return found
    return None


def summary(name: str, latencies: Sequence[float], statuses: Sequence[int]) -> float:
    p50, p99 = (percentile(latencies, q) * 1e3 for q in (0.5, 0.99))
    ok = sum(s == 200 for s in statuses)
    print(
        f"{name}: {len(latencies)} acknowledgements, {ok} with 200: p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms, max {max(latencies) * 1e3:.1f} ms"
    )
    return p99


async def main(args: argparse.Namespace) -> None:
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-purge-"))
    path = workdir / "tomo.db"
    started = time.perf_counter()
    # bench.context's set-up runs its own event loop: on a thread of its own here.
    await asyncio.to_thread(populate, path, channels=args.channels, per_channel=args.per_channel)
    database = f"sqlite:///{path}"
    ((total,),) = query(database, "SELECT count(*) FROM message")
    print(f"{total} messages written in {time.perf_counter() - started:.0f} s ({path})")
    workspace = Workspace()
    window = int(args.rate * args.seconds)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    standins = uvicorn("bench.standins:app", port=port, env=env, log=workdir / "s.log")
    with running(standins):
        wait_ready(standins, f"http://127.0.0.1:{port}/api/auth.test")
        tomo_port, log = free_port(), workdir / "tomo.log"
        tomo = uvicorn(
            "app.main:app",
            port=tomo_port,
            env=tomo_env(
                database_url=database,
                slack_url=f"http://127.0.0.1:{port}/api/",
                model_url=f"http://127.0.0.1:{port}/v1",
                MESSAGE_RETENTION_DAYS=str(args.retention_days),
            ),
            log=log,
        )
        with running(tomo):
            wait_ready(tomo, f"http://127.0.0.1:{tomo_port}/healthz", timeout=300)
            during: list[float] = []
            statuses: list[int] = []
            while finished(log) is None:
                result = await loadgen.fixed_rate(
                    tomo_port, workspace.deliveries(window), rate=args.rate, connections=50
                )
                during += result.latencies
                statuses += result.statuses
            done = finished(log)
            assert done is not None
            after = await loadgen.fixed_rate(
                tomo_port, workspace.deliveries(window), rate=args.rate, connections=50
            )
    ((left,),) = query(database, "SELECT count(*) FROM message")
    ((old,),) = query(
        database,
        "SELECT count(*) FROM message WHERE created_at < :before",
        before=time.time() - args.retention_days * 86400,
    )
    print(f"tomo logged: purge: deleted {done.group(1)} in {done.group(2)} s")
    print(f"{left} messages left, {old} of them older than {args.retention_days} days")
    p99_during = summary(f"at {args.rate:.0f} req/s during the purge", during, statuses)
    control = f"at {args.rate:.0f} req/s after it (control)"
    p99_after = summary(control, after.latencies, after.statuses)
    print(load_after())
    deleted = re.search(r"(\d+) messages", done.group(1))
    print(
        f"purge deleted={deleted.group(1) if deleted else 0} seconds={done.group(2)} "
        f"p99_ms_during={p99_during:.1f} p99_ms_after={p99_after:.1f}"
    )


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--per-channel", type=int, default=10_000)
    parser.add_argument("--retention-days", type=float, default=7)
    parser.add_argument("--rate", type=float, default=200.0, help="fixed rate, req/s")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one window")
    return parser.parse_args(argv)


def run() -> None:
    asyncio.run(main(parse()))


if __name__ == "__main__":
    run()
