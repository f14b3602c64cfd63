"""An acknowledged event survives a crash: `kill -9` the real server process while it answers
a stream of concurrent events, then find every event that got its 200 in the database."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from sqlalchemy import text

from app.db.engine import create_engine
from tests.conftest import SIGNING_SECRET, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS, WORKER_WAIT_SECONDS
from tests.signing import sign

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SENDERS = 30
KILL_AFTER = 300  # acknowledged events; the senders' other requests are in flight then


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "uvicorn", "app.main:app", "--host", "127.0.0.1"]
    command += ["--app-dir", str(PROJECT_ROOT), "--port", str(port)]
    with log.open("ab") as out:  # run beside its log: a developer's `.env` is not read
        return subprocess.Popen(command, env=env, cwd=log.parent, stdout=out, stderr=out)


async def wait_healthy(client: httpx.AsyncClient, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WORKER_WAIT_SECONDS  # a start on a busy machine
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited during start-up"
        with contextlib.suppress(httpx.TransportError):
            if (await client.get("/healthz", timeout=5)).status_code == 200:
                return
        await asyncio.sleep(0.05)
    raise AssertionError("the server did not become healthy")


def envelope(event_id: str, channel: str, ts: str) -> bytes:
    event = {"type": "message", "channel": channel, "user": "U1", "text": "hi", "ts": ts}
    payload = {"type": "event_callback", "team_id": "T0001", "event_id": event_id}
    return json.dumps({**payload, "event": {**event, "channel_type": "channel"}}).encode()


async def test_every_acknowledged_event_survives_kill_9(
    slack: FakeSlack, model: FakeModel, database_url: str, tmp_path: Path
) -> None:
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "HOME", "LANG")}
    env |= {
        "PYTHONPATH": str(PROJECT_ROOT),
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_BOT_TOKEN": "xoxb-test-token",
        "SLACK_API_URL": slack.url,
        "DATABASE_URL": database_url,
        "LLM_API_BASE": model.api_base,
        "LLM_MODEL": "openai/test-model",
        "MIN_WAIT_SECONDS": "3600",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LOG_LEVEL": "WARNING",
    }
    port = free_port()
    process = start_server(env, port, tmp_path / "server.log")
    acknowledged: list[tuple[str, str, str]] = []
    enough = asyncio.Event()
    numbers = itertools.count()
    limits = httpx.Limits(max_connections=SENDERS)
    # An answer may take longer than httpx's 5 s on a busy machine (30 requests at once to a
    # server at niceness 10): a sender whose request timed out before the kill would stop
    # sending, and with enough of them stopped the 300 acknowledgements would not come.
    timeout = httpx.Timeout(WAIT_SECONDS)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
            await wait_healthy(client, process)

            async def sender() -> None:
                while not enough.is_set():
                    n = next(numbers)
                    delivery = (f"EvCrash{n:06d}", f"C{n % 7}", next_ts())
                    body = envelope(*delivery)
                    try:
                        response = await client.post(
                            "/slack/events", content=body, headers=sign(body, secret=SIGNING_SECRET)
                        )
                    except httpx.TransportError:
                        return  # killed while this one was in flight: it was never acknowledged
                    if response.status_code == 200:
                        acknowledged.append(delivery)
                        if len(acknowledged) >= KILL_AFTER:
                            enough.set()

            senders = [asyncio.create_task(sender()) for _ in range(SENDERS)]
            # However slowly they come; or until every sender stopped (then too few below).
            await wait_for(
                lambda: enough.is_set() or all(s.done() for s in senders),
                timeout=WORKER_WAIT_SECONDS,
                what=f"{KILL_AFTER} acknowledged events",
            )
            process.kill()  # SIGKILL: no shutdown, no flush
            await asyncio.gather(*senders)
    finally:
        process.kill()
        process.wait(5)

    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            seen = set(
                (await connection.execute(text("SELECT event_id FROM seen_event"))).scalars()
            )
            rows = await connection.execute(text("SELECT channel, ts FROM message"))
            stored = {(row[0], row[1]) for row in rows}
    finally:
        await engine.dispose()
    lost = [d for d in acknowledged if d[0] not in seen or (d[1], d[2]) not in stored]
    assert len(acknowledged) >= KILL_AFTER
    assert lost == []
