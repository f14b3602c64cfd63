"""Acknowledgement throughput and latency: tomo (database and timers for real) against Bolt.

    .venv/bin/python -m bench.ack            # 20,000 requests each, then 200 req/s for 10 s
    .venv/bin/python -m bench.ack --quick    # 4,000 requests each, then 200 req/s for 3 s

Both servers run as `uvicorn` subprocesses on 127.0.0.1 with the Procfile's flags (no access
log for either) and receive
the same signed bodies over the same number of connections from this process (the load
generator). The bodies are sent in rounds, Bolt and tomo taking turns (ABBA), so whatever else
the machine does falls on both alike. tomo uses a SQLite file and its real scheduler;
MIN_WAIT_SECONDS is ten hours so no judgment fires, and Slack and the model are stand-ins on
127.0.0.1 (bench/standins.py), so the replies that mentions schedule run against them. After
tomo's fixed-rate phase Bolt gets the same bodies at the same rate, a control for what the
machine itself does to latency. At the end every acknowledged event is looked up in tomo's
database.

    .venv/bin/python -m bench.ack --backend procrastinate   # tomo on PostgreSQL, timers as jobs
    .venv/bin/python -m bench.ack --bolt-stores   # Bolt too keeps each event before answering

With `--backend procrastinate` tomo runs with JOB_BACKEND=procrastinate on a scratch PostgreSQL
database (TOMO_BENCH_DATABASE_URL names the server): each message's timer is a database write
on the acknowledgement's path.

tomo counts its metrics (METRICS_TOKEN is set) and `GET /metrics` is scraped once a second
throughout, as Prometheus would, so their cost is in tomo's figures.

Beside tomo's server the summary gives its job worker's share of a core and the stand-ins'
(answering the job worker: in production Slack and the model run elsewhere), and the job
worker's CPU per reply over the rounds: the replies share the machine with the acknowledgements.
Last line: `ack ratio_vs_bolt=X.XX p99_ms_at_fixed_rate=Y.Y lost=N`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench import loadgen
from bench.common import (
    SECRET,
    UVICORN_FLAGS,
    Scratch,
    Steal,
    cpu_seconds,
    free_port,
    load_after,
    machine,
    percentile,
    query,
    running,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)
from bench.events import BOT_USER, MENTION, Delivery, Workspace


@dataclass
class Server:
    name: str
    process: subprocess.Popen[bytes]
    port: int
    statuses: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    cpu: float = 0.0
    cpu_children: float = 0.0  # tomo's job worker
    cpu_standins: float = 0.0  # Slack's and the model's stand-ins, answering the job worker

    @property
    def rate(self) -> float:
        return sum(1 for s in self.statuses if s) / self.elapsed

    def summary(self) -> str:
        others = {s: n for s, n in Counter(self.statuses).items() if s != 200}
        answered = sum(1 for s in self.statuses if s)
        p50, p99 = (percentile(self.latencies, q) * 1e3 for q in (0.5, 0.99))
        return (
            f"{self.name:<5} {self.rate:7.0f} req/s  p50 {p50:5.1f} ms  p99 {p99:6.1f} ms"
            f"  ({answered} answered"
            f" in {self.elapsed:.2f} s; server CPU {self.cpu / self.elapsed:.0%} of a core,"
            f" {self.cpu / max(1, answered) * 1e6:.0f} µs a request"
            + (
                f"; job worker {self.cpu_children / self.elapsed:.0%} of a core"
                if self.cpu_children
                else ""
            )
            + (
                f"; stand-ins {self.cpu_standins / self.elapsed:.0%}"
                if self.cpu_standins >= 0.01 * self.elapsed
                else ""
            )
            + (f"; non-200: {others})" if others else ")")
        )


async def saturate(
    server: Server, deliveries: list[Delivery], connections: int, standins: int
) -> None:
    pid = server.process.pid
    before, family = cpu_seconds(pid), cpu_seconds(pid, family=True)
    answering = cpu_seconds(standins)
    result = await loadgen.saturate(server.port, deliveries, connections=connections)
    server.cpu_standins += cpu_seconds(standins) - answering
    used = cpu_seconds(pid)
    server.cpu += used - before
    server.cpu_children += cpu_seconds(pid, family=True) - used - (family - before)
    server.statuses += result.statuses
    server.latencies += result.latencies
    server.elapsed += result.elapsed


def lost(database: str, deliveries: Sequence[Delivery], statuses: Sequence[int]) -> int:
    """Acknowledged deliveries whose event id or message is missing from tomo's database."""
    seen = {row[0] for row in query(database, "SELECT event_id FROM seen_event")}
    messages = set(query(database, "SELECT channel, ts FROM message"))
    return sum(
        1
        for delivery, status in zip(deliveries, statuses, strict=True)
        if status == 200
        and (delivery.event_id not in seen or (delivery.channel, delivery.ts) not in messages)
    )


def posted(database: str) -> int:
    """Replies tomo has posted so far."""
    return int(str(query(database, "SELECT count(*) FROM reply WHERE status = 'posted'")[0][0]))


def reply_latencies(database: str, deliveries: Sequence[Delivery]) -> tuple[list[float], int]:
    """(seconds from receiving each mention to tomo's reply in its thread, mentions with no
    reply), from tomo's database: how long the people who asked waited."""
    mentions = {d.event_id: (d.channel, d.ts) for d in deliveries if d.kind == MENTION}
    received: dict[tuple[str, str], float] = {}
    for event_id, at in query(database, "SELECT event_id, received_at FROM seen_event"):
        key = mentions.get(str(event_id))
        if key is not None:
            received[key] = min(received.get(key, float(str(at))), float(str(at)))
    rows = query(database, "SELECT channel, ts, thread_ts, conversation_ts, user_id, created_at "
                           "FROM message")  # fmt: skip
    conversation = {(str(r[0]), str(r[1])): str(r[3]) for r in rows}
    replies: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for channel, ts, thread_ts, _, user_id, created_at in rows:
        if user_id == BOT_USER:
            replies.setdefault((str(channel), str(thread_ts)), []).append(
                (str(ts), float(str(created_at)))
            )
    latencies, unanswered = [], 0
    for (channel, ts), at in sorted(received.items()):
        thread = conversation.get((channel, ts), "")
        answered = [made for posted, made in replies.get((channel, thread), []) if posted > ts]
        if answered:
            latencies.append(min(answered) - at)
        else:
            unanswered += 1
    return latencies, unanswered


async def steady_rate(
    server: Server, deliveries: Sequence[Delivery], args: argparse.Namespace, steal: Steal
) -> loadgen.Result:
    """The open-loop phase for one server, printed with the hypervisor's share meanwhile."""
    steal.share()
    fixed = await loadgen.fixed_rate(
        server.port, deliveries, rate=args.rate, connections=args.connections
    )
    stolen = steal.share()
    p50, p99 = (percentile(fixed.latencies, q) * 1e3 for q in (0.5, 0.99))
    print(
        f"{server.name} at {args.rate:.0f} req/s for {fixed.elapsed:.1f} s: p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms, max {max(fixed.latencies) * 1e3:.1f} ms "
        f"({fixed.answered} answered, {sum(s == 200 for s in fixed.statuses)} with 200; "
        f"hypervisor steal {stolen:.0%})"
    )
    return fixed


METRICS_TOKEN = "bench-metrics"
SCRAPES = [0]


async def scrape(port: int) -> None:
    """GET /metrics once a second, as Prometheus would (its own connection)."""
    request = (
        f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {METRICS_TOKEN}"
        "\r\nConnection: close\r\n\r\n"
    ).encode()
    while True:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request)
        answer = await reader.read()
        writer.close()
        if not answer.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"/metrics answered {answer[:80]!r}")
        SCRAPES[0] += 1
        await asyncio.sleep(1.0)


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}


async def main(args: argparse.Namespace) -> None:
    with contextlib.ExitStack() as cleanup:  # a scratch PostgreSQL database is dropped after
        await measure(args, cleanup)


async def measure(args: argparse.Namespace, cleanup: contextlib.ExitStack) -> None:
    print(machine())
    print(f"uvicorn flags (the Procfile's, plus no access log): {' '.join(UVICORN_FLAGS)}")
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-ack-"))
    workspace = Workspace(mentions=args.mentions)
    warm = workspace.deliveries(args.warmup)
    measured = workspace.deliveries(args.requests)
    steady = workspace.deliveries(int(args.rate * args.seconds))
    kinds = dict(Counter(d.kind for d in measured))
    print(f"{len(measured)} signed deliveries, {args.connections} connections, mix {kinds}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    port = free_port()
    standins = uvicorn("bench.standins:app", port=port, env=environment(), log=workdir / "s.log")
    with running(standins):
        wait_ready(standins, f"http://127.0.0.1:{port}/api/auth.test")
        slack_url, model_url = f"http://127.0.0.1:{port}/api/", f"http://127.0.0.1:{port}/v1"
        bolt_env = {**environment(), "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": slack_url}
        if args.bolt_stores:
            bolt_env["BENCH_BOLT_STORE"] = str(workdir / "bolt.db")
            print("Bolt writes each event to SQLite and commits before it answers (--bolt-stores)")
        if args.backend == "procrastinate":
            database = cleanup.enter_context(Scratch("ack")).url
        else:
            database = f"sqlite:///{workdir / 'tomo.db'}"
        tomo_environment = tomo_env(
            database_url=database,
            slack_url=slack_url,
            model_url=model_url,
            JOB_BACKEND=args.backend,
            METRICS_TOKEN=METRICS_TOKEN,
        )
        bolt_port, tomo_port = free_port(), free_port()
        bolt_process = uvicorn("bench.bolt_app:api", port=bolt_port, env=bolt_env,
                               log=workdir / "bolt.log")  # fmt: skip
        tomo_process = uvicorn("app.main:app", port=tomo_port, env=tomo_environment,
                               log=workdir / "tomo.log")  # fmt: skip
        with running(bolt_process), running(tomo_process):
            bolt = Server("bolt", bolt_process, bolt_port)
            tomo = Server("tomo", tomo_process, tomo_port)
            for server in (bolt, tomo):
                wait_ready(server.process, f"http://127.0.0.1:{server.port}/healthz")
                await loadgen.saturate(server.port, warm, connections=args.connections)
            scraping = asyncio.create_task(scrape(tomo_port))
            cleanup.callback(scraping.cancel)
            for server in (bolt, tomo):  # LiteLLM imported, warm-up replies finished
                wait_idle(server.process.pid)

            size = -(-len(measured) // args.rounds)
            steal = Steal()
            worker_cpu = cpu_seconds(tomo.process.pid, family=True) - cpu_seconds(tomo.process.pid)
            replies_before = posted(database)
            client = time.process_time()
            drained = []
            for n in range(args.rounds):
                chunk = measured[n * size : (n + 1) * size]
                for server in (bolt, tomo) if n % 2 == 0 else (tomo, bolt):
                    await saturate(server, chunk, args.connections, standins.pid)
                    started = time.perf_counter()
                    wait_idle(server.process.pid)  # a round's leftovers stay in its round
                    if server is tomo:
                        drained.append(time.perf_counter() - started)
            client_share = (time.process_time() - client) / (bolt.elapsed + tomo.elapsed)
            print(bolt.summary())
            print(tomo.summary())
            print(
                f"(load generator: {client_share:.0%} of a core while sending; "
                f"hypervisor steal {steal.share():.0%} of the machine's CPU time)"
            )
            print(
                "tomo's replies to the round's mentions went on after its last acknowledgement "
                f"for {max(drained):.1f} s at most (until the server and its job worker were idle)"
            )
            worker_cpu = (
                cpu_seconds(tomo.process.pid, family=True) - cpu_seconds(tomo.process.pid)
            ) - worker_cpu
            replies = posted(database) - replies_before
            if replies:
                print(
                    f"tomo's job worker: {worker_cpu / replies * 1e3:.1f} ms of CPU a reply "
                    f"({replies} replies in the rounds, {worker_cpu:.1f} s)"
                )

            fixed = await steady_rate(tomo, steady, args, steal)
            p99 = percentile(fixed.latencies, 0.99) * 1e3
            wait_idle(tomo.process.pid)  # the last mentions' replies
            # The control: the same bodies at the same rate to a server that records nothing.
            # Whatever the machine does to latency (another tenant, the hypervisor) shows here.
            await steady_rate(bolt, steady, args, steal)
            waited, unanswered = reply_latencies(database, steady)
            if waited or unanswered:
                r50, r99 = (percentile(waited, q) * 1e3 for q in (0.5, 0.99))
                print(
                    f"mention to reply during the fixed rate: p50 {r50:.0f} ms, p99 {r99:.0f} ms "
                    f"({len(waited)} replies, {unanswered} mentions unanswered; the model and "
                    "Slack stand-ins answer at once)"
                )
            missing = lost(database, measured, tomo.statuses) + lost(
                database, steady, fixed.statuses
            )
    acknowledged = sum(s == 200 for s in (*tomo.statuses, *fixed.statuses))
    ratio = tomo.rate / bolt.rate
    print(load_after())
    print(
        f"ratio tomo/bolt {ratio:.2f}; {acknowledged} acknowledged events looked up in "
        f"{database}: {missing} missing (server logs in {workdir})"
    )
    print(f"/metrics scraped once a second while measuring: {SCRAPES[0]} scrapes")
    print(f"ack ratio_vs_bolt={ratio:.2f} p99_ms_at_fixed_rate={p99:.1f} lost={missing}")


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    parser.add_argument("--requests", type=int, help="deliveries per server (default 20000)")
    parser.add_argument("--rounds", type=int, help="turns each server takes (default 4)")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200.0, help="fixed rate, req/s")
    parser.add_argument("--seconds", type=float, help="fixed-rate duration (default 10)")
    parser.add_argument("--mentions", type=float, default=0.02, help="share of mentions")
    parser.add_argument(
        "--bolt-stores",
        action="store_true",
        help="Bolt writes each event to SQLite before it answers (bench/bolt_app.py)",
    )
    parser.add_argument(
        "--backend",
        choices=("apscheduler", "procrastinate"),
        default="apscheduler",
        help="tomo's JOB_BACKEND (procrastinate: on a scratch PostgreSQL database)",
    )
    args = parser.parse_args(argv)
    args.requests = args.requests or (4000 if args.quick else 20000)
    args.rounds = args.rounds or (2 if args.quick else 4)
    args.seconds = args.seconds or (3.0 if args.quick else 10.0)
    args.warmup = 500 if args.quick else 2000
    return args


def run() -> None:
    args = parse()
    try:
        import uvloop
    except ImportError:
        asyncio.run(main(args))
        return
    uvloop.run(main(args))


if __name__ == "__main__":
    run()
