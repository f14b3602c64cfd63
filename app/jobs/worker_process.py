"""The job worker's process, as its parent (app.jobs.supervisor) starts and watches it: `python -m
app.wiring.worker FD` with the parent's settings, at a lower CPU priority, talking over a
socket pair (app.jobs.protocol); and the watchdog that kills it when it answers nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.db.migrate import PROJECT_ROOT
from app.settings import Settings, settings_environment

logger = logging.getLogger(__name__)

# Well below the web process: when both want the CPU (a burst of events), Slack's 3-second
# deadline wins and replies wait a little; when the CPU is free, replies get all of it. (At 5
# the worker still took enough of a 2-core machine to hold acknowledgements back.) Set by the
# parent as soon as the child exists, so the child's own imports already run at it.
NICENESS = 10
# Before its first answer a worker is still importing (seconds at its niceness on a busy
# machine): the watchdog gives it at least this long.
FIRST_ANSWER_SECONDS = 120.0
PINGS_PER_TIMEOUT = 4


@dataclass(frozen=True)
class WorkerProcess:
    process: asyncio.subprocess.Process
    reader: asyncio.StreamReader  # its answers
    writer: asyncio.StreamWriter  # the jobs it is sent


def environment(settings: Settings) -> dict[str, str]:
    """The child's environment: this process's, its settings replaced by `settings` exactly."""
    env = {k: v for k, v in os.environ.items() if k not in Settings.model_fields}
    env.update(settings_environment(settings))
    # glibc's malloc keeps an arena per thread that allocated (pictures and documents are
    # read on threads): two arenas keep the worker's memory after a large file from
    # staying spread over many (docs/BENCHMARKS.md#memory).
    env.setdefault("MALLOC_ARENA_MAX", "2")
    # And a fixed mmap threshold: a block of 1 MiB or more (a decoded picture, its bands,
    # a fetched page) is mapped on its own and given back when freed. Without it glibc
    # raises the threshold after each such block is freed (up to 32 MiB), and the next
    # ones come from the heap, which keeps them after they are freed.
    env.setdefault("MALLOC_MMAP_THRESHOLD_", str(1024 * 1024))
    # The child imports the `app` this process runs (PROJECT_ROOT holds the package),
    # wherever that was found: uvicorn's --app-dir puts it on this process's path only,
    # and the child may start elsewhere.
    paths = [str(PROJECT_ROOT), *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


async def spawn(settings: Settings, *, metrics_directory: Path | None) -> WorkerProcess:
    """A new worker process, connected. `metrics_directory`: where it counts
    (app.observability.metrics)."""
    ours, theirs = socket.socketpair()
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app.wiring.worker",
            str(theirs.fileno()),
            *([str(metrics_directory)] if metrics_directory else []),
            pass_fds=(theirs.fileno(),),
            env=environment(settings),
            stdin=asyncio.subprocess.DEVNULL,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    with contextlib.suppress(OSError):  # only ever lowered, so always allowed
        os.setpriority(os.PRIO_PROCESS, process.pid, NICENESS)
    reader, writer = await asyncio.open_unix_connection(sock=ours)
    return WorkerProcess(process, reader, writer)


async def watch(
    process: asyncio.subprocess.Process,
    *,
    timeout: float,
    ping: Callable[[], None],
    heard_at: Callable[[], float | None],
) -> None:
    """Ping the worker; kill it when it has answered nothing for `timeout` (its first answer,
    `heard_at()` None until then, gets FIRST_ANSWER_SECONDS at least). Its socket then closes
    and the supervisor starts another."""
    started = time.monotonic()
    while True:
        ping()
        await asyncio.sleep(timeout / PINGS_PER_TIMEOUT)
        last = heard_at()
        if last is None:
            silent, allowed = time.monotonic() - started, max(timeout, FIRST_ANSWER_SECONDS)
        else:
            silent, allowed = time.monotonic() - last, timeout
        if silent > allowed and process.returncode is None:
            logger.error(
                "job worker %d answered nothing for %.1f s; killing it", process.pid, silent
            )
            process.kill()
            return
