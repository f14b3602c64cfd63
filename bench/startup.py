"""Start-up time: `uvicorn app.main:app` launched → first 200 from /healthz, and its memory.

    .venv/bin/python -m bench.startup            # 5 measured starts
    .venv/bin/python -m bench.startup --runs 10

A first, unmeasured start creates the SQLite schema; the measured starts find it at head (the
steady case: every restart but the first after an upgrade). Slack and the model are dead ports
on 127.0.0.1, so nothing outside is contacted. RSS is read when /healthz first answers, and
again once the process is idle (LiteLLM is imported in the background after start).

After each start the same interpreter imports the stack tomo is built on and nothing else
(`STACK`: uvicorn, FastAPI, SQLModel over SQLAlchemy's asyncio and aiosqlite, APScheduler,
slack-sdk's signature check): no start-up can be shorter on this machine, and the difference
is what tomo itself adds. On a shared machine both move together from minute to minute.
Last line: `startup median_s=X.XX rss_mib=N`.
"""

from __future__ import annotations

import argparse
import compileall
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import (
    ROOT,
    free_port,
    machine,
    median,
    rss_mib,
    stop,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)

STACK = (
    "uvicorn.main",
    "fastapi",
    "sqlmodel",
    "sqlalchemy.ext.asyncio",
    "aiosqlite",
    "apscheduler.schedulers.asyncio",
    "slack_sdk.signature",
)


def stack_once() -> float:
    """Seconds for a fresh interpreter to import STACK and exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {', '.join(STACK)}"], cwd=ROOT, check=True)
    return time.perf_counter() - started


def start_once(env: dict[str, str], log: Path) -> tuple[float, float, float]:
    """(seconds to the first 200, RSS MiB then, RSS MiB once idle)."""
    port = free_port()
    started = time.perf_counter()
    process = uvicorn("app.main:app", port=port, env=env, log=log)
    try:
        wait_ready(process, f"http://127.0.0.1:{port}/healthz", timeout=60)
        seconds = time.perf_counter() - started
        ready_rss = rss_mib(process.pid)
        wait_idle(process.pid)
        return seconds, ready_rss, rss_mib(process.pid, family=True)
    finally:
        stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    # Every start but the first finds the bytecode the first one wrote, unless the environment
    # forbids writing it (PYTHONDONTWRITEBYTECODE): compile it here either way, as a build would.
    compileall.compile_dir(ROOT / "app", quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-startup-"))
    dead = f"http://127.0.0.1:{free_port()}"
    env = tomo_env(
        database_url=f"sqlite:///{workdir / 'tomo.db'}",
        slack_url=f"{dead}/api/",
        model_url=f"{dead}/v1",
    )
    first, _, _ = start_once(env, workdir / "tomo.log")
    print(f"first start (creates the schema): {first:.2f} s")
    times, ready, idle, stack = [], [], [], []
    for run in range(args.runs):
        seconds, ready_rss, idle_rss = start_once(env, workdir / "tomo.log")
        times.append(seconds)
        ready.append(ready_rss)
        idle.append(idle_rss)
        stack.append(stack_once())
        print(
            f"run {run + 1}: {seconds:.3f} s to the first 200, RSS {ready_rss:.0f} MiB then, "
            f"{idle_rss:.0f} MiB with the job worker once it has loaded LiteLLM; "
            f"the stack's imports alone {stack[-1]:.3f} s"
        )
    print(
        f"start-up min {min(times):.3f} s, median {median(times):.3f} s, max {max(times):.3f} s; "
        f"RSS at first 200 median {median(ready):.0f} MiB, idle with the worker "
        f"{median(idle):.0f} MiB"
    )
    print(
        f"the stack's imports alone ({', '.join(STACK)}): median {median(stack):.3f} s; "
        f"tomo's start-up is {median(times) / median(stack):.2f}x that, "
        f"{median(times) - median(stack):+.3f} s"
    )
    print(f"startup median_s={median(times):.2f} rss_mib={median(ready):.0f}")


if __name__ == "__main__":
    main()
