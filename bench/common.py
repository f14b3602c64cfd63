"""What every benchmark shares: the machine it ran on, servers as subprocesses, their memory."""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from app.gate.scope import Scope

ROOT = Path(__file__).resolve().parents[1]
# The PostgreSQL server the benchmarks that need one use (a scratch database of their own).
POSTGRES = os.environ.get("TOMO_BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
HOST = "127.0.0.1"
SECRET = "bench-signing-secret"


def procfile_flags() -> tuple[str, ...]:
    """The uvicorn options of the Procfile's web process, less host and port: servers in the
    benchmarks run the way tomo is deployed."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith("web:"):
            words = line.split()[3:]  # after `web: uvicorn app.main:app`
            flags = []
            while words:
                word = words.pop(0)
                if word in ("--host", "--port"):
                    words.pop(0)
                else:
                    flags.append(word)
            return tuple(flags)
    return ()


# tomo keeps uvicorn's access log quiet itself (app/observability/logs.py); the flag gives Bolt the
# same
# saving, so neither server pays for an access line.
UVICORN_FLAGS = (*procfile_flags(), "--no-access-log")


def machine() -> str:
    """CPU model, cores, Python: printed by every benchmark before its figures."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return (
        f"machine: {model}, {os.cpu_count()} cores, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.release()}"
    )


def load_after() -> str:
    """The load average once a benchmark is done, printed after its figures: how busy the
    machine was while they were taken."""
    return f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"


class Steal:
    """The share of the machine's CPU time its hypervisor gave to someone else (`steal` in
    /proc/stat) since the last reading: on a shared virtual machine it comes and goes, and
    while it is high every latency here grows, whatever the server does."""

    def __init__(self) -> None:
        self._last = self._read()

    @staticmethod
    def _read() -> tuple[int, int]:
        try:
            with open("/proc/stat") as stat:
                fields = [int(x) for x in stat.readline().split()[1:]]
        except (OSError, ValueError):
            return 0, 0
        # user nice system idle iowait irq softirq steal [guest guest_nice: inside user/nice]
        return fields[7] if len(fields) > 7 else 0, sum(fields[:8])

    def share(self) -> float:
        """Steal since the previous call (or since the meter was made), 0..1."""
        (steal, total), (last_steal, last_total) = self._read(), self._last
        self._last = (steal, total)
        return (steal - last_steal) / (total - last_total) if total > last_total else 0.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def tomo_env(*, database_url: str, slack_url: str, model_url: str, **extra: str) -> dict[str, str]:
    """Settings for a tomo that talks only to 127.0.0.1 and never judges during a run."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLACK_", "LLM_", "DATABASE_", "TOMO_"))
    }
    env.update(
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_BOT_TOKEN="xoxb-bench",
        SLACK_API_URL=slack_url,
        DATABASE_URL=database_url,
        LLM_API_BASE=model_url,
        LLM_API_KEY="sk-bench",
        LLM_MAX_RETRIES="0",
        LLM_TIMEOUT_SECONDS="5",
        MIN_WAIT_SECONDS="36000",
        # The lively-channel pace's floor in the same ratio to MIN_WAIT_SECONDS as the defaults'
        # (60 to 300): its count of a channel's recent messages stops where the wait reaches the
        # floor (26 messages, as by default), where 60 s against ten hours would count 1,000 on
        # every acknowledgement. No wait is shorter than two hours, so still no judgment fires.
        PACE_MIN_WAIT_SECONDS="7200",
        # Follow-ups are told apart on the ack path as in production, but judged only later.
        FOLLOW_UP_WAIT_SECONDS="36000",
        MEMORY_UPDATE_INTERVAL_SECONDS="36000",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def uvicorn(
    app: str,
    *,
    port: int,
    env: dict[str, str],
    flags: Sequence[str] = UVICORN_FLAGS,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """`uvicorn APP` on 127.0.0.1:port as a subprocess; its output goes to `log`."""
    command = [sys.executable, "-m", "uvicorn", app, "--host", HOST, "--port", str(port), *flags]
    command += ["--app-dir", str(ROOT)]
    out = open(log, "ab") if log else subprocess.DEVNULL  # the child holds it from here on
    # Not in the checkout: a developer's `.env` there would be read over `env`.
    cwd = log.parent if log else Path(tempfile.gettempdir())
    return subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)


def get(url: str, timeout: float = 1.0) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def wait_ready(process: subprocess.Popen[bytes], url: str, *, timeout: float = 60.0) -> float:
    """Poll `url` until it answers 200; returns the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before {url} answered")
        with contextlib.suppress(OSError):
            if get(url, timeout=1.0) == 200:
                return time.perf_counter() - started
        time.sleep(0.005)
    raise RuntimeError(f"{url} did not answer 200 within {timeout} s")


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (tomo's job worker)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def cpu_seconds(pid: int, *, family: bool = False) -> float:
    """CPU time of the process; with `family`, of its live children too."""
    pids = [pid, *children(pid)] if family else [pid]
    total = 0.0
    for each in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mib(pid: int, *, family: bool = False) -> float:
    """Resident memory of the process; with `family`, of its live children too."""
    total = 0.0
    for each in [pid, *children(pid)] if family else [pid]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
    return total


def pss_mib(pid: int, *, family: bool = False) -> float:
    """Proportional set size of the process (with `family`, plus its live children's): each
    page shared by N processes counts 1/N in each, so the sum over a family is what a
    container's memory accounting sees, where the sum of RSS counts shared pages twice."""
    total = 0.0
    for each in [pid, *children(pid)] if family else [pid]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{each}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) / 1024
    return total


def wait_idle(pid: int, *, below: float = 0.05, timeout: float = 60.0) -> None:
    """Wait until the process and its children use less than `below` of a core (LiteLLM
    loaded, warm-up and replies done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu_seconds(pid, family=True)
        time.sleep(0.5)
        if (cpu_seconds(pid, family=True) - before) / 0.5 < below:
            return
    raise RuntimeError(f"process {pid} did not settle within {timeout} s")


def stop(process: subprocess.Popen[bytes], *, kill: bool = False) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def running(process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    try:
        yield process
    finally:
        stop(process)


class Scratch:
    """A database of its own on the PostgreSQL server, dropped afterwards."""

    def __init__(self, name: str) -> None:
        server = make_url(POSTGRES.replace("postgres://", "postgresql://", 1))
        self._admin = create_engine(
            server.set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
        )
        self._name = f"tomo_bench_{name}_{os.getpid()}"
        self.url = server.set(database=self._name).render_as_string(hide_password=False)

    def __enter__(self) -> Scratch:
        with self._admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{self._name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{self._name}"'))
        return self

    def __exit__(self, *_: object) -> None:
        with self._admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{self._name}" WITH (FORCE)'))
        self._admin.dispose()

    def count(self, sql: str) -> int:
        (row,) = query(self.url, sql)
        return int(str(row[0]))


def query(database_url: str, sql: str, **params: object) -> list[tuple[object, ...]]:
    """Rows of one query on tomo's database (SQLite file or PostgreSQL), read after a run."""
    url = make_url(database_url.replace("postgres://", "postgresql://", 1))
    if url.get_backend_name() == "postgresql":
        url = url.set(drivername="postgresql+psycopg")
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql), params)]
    finally:
        engine.dispose()


class PublicScopes:
    """The scope of an ordinary public channel, where nobody reads less: what the benches'
    prompts are built with (in tomo app.gate.scopes decides it, asking Slack who reads)."""

    async def for_conversation(self, channel: str) -> Scope:
        return Scope(conversation=channel, private=frozenset())
