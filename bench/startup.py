"""Start-up time: `uvicorn app.main:app` launched → first 200 from /healthz, → first 200 from
/readyz (the job worker has loaded LiteLLM: replies wait for no import), → the reply to a
mention sent that moment; and its memory.

    .venv/bin/python -m bench.startup            # 5 measured starts
    .venv/bin/python -m bench.startup --runs 10

A first, unmeasured start creates the SQLite schema; the measured starts find it at head (the
steady case: every restart but the first after an upgrade). Slack and the model are stand-ins
on 127.0.0.1 that answer at once (bench/standins.py, which notes when each post arrives), so
nothing outside is contacted. The moment /readyz says 200 a mention is sent (app_mention and
message, as Slack sends them): a platform's startup probe sends traffic then, and its reply
should be posted within about a second, as any later reply is. Memory is read once the process
is idle with its job worker after that first reply: the sum of their PSS (what a container
counts: shared pages once), and, secondary, the sum of their RSS (shared pages twice); and the
web process's RSS when /healthz first answers.

After each start the same interpreter imports the stack tomo is built on and nothing else
(`STACK`: uvicorn, FastAPI, SQLModel over SQLAlchemy's asyncio and aiosqlite, APScheduler,
slack-sdk's signature check): no start-up can be shorter on this machine, and the difference
is what tomo itself adds. On a shared machine both move together from minute to minute.
Last line: `startup median_s=X.XX pss_mib=N rss_mib=N ready_median_s=Y.YY
first_reply_median_ms=Z` (pss_mib: idle after the first reply, the server and its job worker).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import (
    ROOT,
    free_port,
    get,
    load_after,
    machine,
    median,
    pss_mib,
    rss_mib,
    running,
    stop,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)
from bench.onit import Tally, acknowledge, recorded

STACK = (
    "uvicorn.main",
    "fastapi",
    "sqlmodel",
    "sqlalchemy.ext.asyncio",
    "aiosqlite",
    "apscheduler.schedulers.asyncio",
    "slack_sdk.signature",
)
TIMEOUT = 120.0  # seconds for a start, and for the first reply after it (a busy machine)
_base = int(time.time()) - 60


@dataclass
class Start:
    healthy: float  # seconds from launch to the first 200 from /healthz
    ready: float  # ... from /readyz
    sign_ms: float  # the mention sent at /readyz's 200: from its acknowledgement to the sign
    reply_ms: float  # ... to its reply posted
    healthy_rss: float  # MiB of the web process at the first 200 from /healthz
    idle_rss: float  # MiB of the process and its job worker, idle
    idle_pss: float  # ... their PSS: what a container counts


def stack_once() -> float:
    """Seconds for a fresh interpreter to import STACK and exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {', '.join(STACK)}"], cwd=ROOT, check=True)
    return time.perf_counter() - started


def until_ready(process: subprocess.Popen[bytes], port: int) -> tuple[float, float, float]:
    """Poll /healthz until it says 200, then /readyz: (seconds from launch to each, RSS MiB at
    the first)."""
    started, url = time.perf_counter(), f"http://127.0.0.1:{port}"
    healthy = wait_ready(process, f"{url}/healthz", timeout=TIMEOUT)
    healthy_rss = rss_mib(process.pid)
    while time.perf_counter() - started < TIMEOUT:
        if process.poll() is not None:
            raise RuntimeError(f"tomo exited with {process.returncode} before it was ready")
        with contextlib.suppress(OSError):
            if get(f"{url}/readyz") == 200:
                return healthy, time.perf_counter() - started, healthy_rss
        time.sleep(0.005)
    raise RuntimeError(f"/readyz did not say 200 within {TIMEOUT:.0f} s")


async def first_reply(port: int, standins: int, key: tuple[str, str]) -> tuple[float, float]:
    """Send a mention now: (ms from its acknowledgement to the sign, and to its reply)."""
    tally = Tally()
    tally.acks[key] = await acknowledge(port, *key)
    deadline = time.monotonic() + TIMEOUT
    while key not in tally.posts or key not in tally.signs:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no reply to the first mention within {TIMEOUT:.0f} s")
        await asyncio.sleep(0.01)
        tally.note(recorded(standins))
    (sign,), (reply,) = tally.waits(tally.signs, [key]), tally.waits(tally.posts, [key])
    return sign, reply


def start_once(env: dict[str, str], log: Path, *, standins: int, run: int) -> Start:
    port = free_port()
    process = uvicorn("app.main:app", port=port, env=env, log=log)
    try:
        healthy, ready, healthy_rss = until_ready(process, port)
        key = (f"CSTART{run:04d}", f"{_base}.{run:06d}")
        sign, reply = asyncio.run(first_reply(port, standins, key))
        wait_idle(process.pid)
        idle = rss_mib(process.pid, family=True), pss_mib(process.pid, family=True)
        return Start(healthy, ready, sign, reply, healthy_rss, *idle)
    finally:
        stop(process)


def measure(runs: int, workdir: Path, standins: int) -> None:
    url = f"http://127.0.0.1:{standins}"
    env = tomo_env(
        database_url=f"sqlite:///{workdir / 'tomo.db'}",
        slack_url=f"{url}/api/",
        model_url=f"{url}/v1",
    )
    first = start_once(env, workdir / "tomo.log", standins=standins, run=0)
    print(f"first start (creates the schema): {first.healthy:.2f} s to /healthz's 200")
    starts: list[Start] = []
    stack: list[float] = []
    for run in range(1, runs + 1):
        starts.append(start_once(env, workdir / "tomo.log", standins=standins, run=run))
        stack.append(stack_once())
        each = starts[-1]
        print(
            f"run {run}: {each.healthy:.3f} s to /healthz's 200, {each.ready:.3f} s to "
            f"/readyz's 200; the mention sent then: sign {each.sign_ms:.0f} ms, reply "
            f"{each.reply_ms:.0f} ms after its acknowledgement; idle with the job worker: PSS "
            f"{each.idle_pss:.0f} MiB (RSS {each.idle_rss:.0f}); RSS {each.healthy_rss:.0f} MiB "
            f"at /healthz's 200; "
            f"the stack's imports alone {stack[-1]:.3f} s"
        )
    healthy, ready = [s.healthy for s in starts], [s.ready for s in starts]
    replies = [s.reply_ms for s in starts]
    print(
        f"/healthz's 200: min {min(healthy):.3f} s, median {median(healthy):.3f} s, max "
        f"{max(healthy):.3f} s; RSS then median {median([s.healthy_rss for s in starts]):.0f} "
        f"MiB; idle after the first reply, the server and its job worker: PSS median "
        f"{median([s.idle_pss for s in starts]):.0f} MiB (RSS "
        f"{median([s.idle_rss for s in starts]):.0f} MiB)"
    )
    print(
        f"/readyz's 200: min {min(ready):.3f} s, median {median(ready):.3f} s, max "
        f"{max(ready):.3f} s; the first mention's reply: median {median(replies):.0f} ms, max "
        f"{max(replies):.0f} ms (its sign: median {median([s.sign_ms for s in starts]):.0f} ms)"
    )
    print(
        f"the stack's imports alone ({', '.join(STACK)}): median {median(stack):.3f} s; "
        f"tomo's start-up to /healthz is {median(healthy) / median(stack):.2f}x that, "
        f"{median(healthy) - median(stack):+.3f} s"
    )
    print(load_after())
    print(
        f"startup median_s={median(healthy):.2f} "
        f"pss_mib={median([s.idle_pss for s in starts]):.0f} "
        f"rss_mib={median([s.idle_rss for s in starts]):.0f} "
        f"ready_median_s={median(ready):.2f} first_reply_median_ms={median(replies):.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    # Every start but the first finds the bytecode the first one wrote, unless the environment
    # forbids writing it (PYTHONDONTWRITEBYTECODE): compile it here either way, as a build would.
    compileall.compile_dir(ROOT / "app", quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-startup-"))
    standins = free_port()
    plain = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LLM_"))}
    log = workdir / "standins.log"
    with running(uvicorn("bench.standins:app", port=standins, env=plain, log=log)) as process:
        wait_ready(process, f"http://127.0.0.1:{standins}/api/auth.test")
        measure(args.runs, workdir, standins)


if __name__ == "__main__":
    main()
