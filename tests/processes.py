"""Real `uvicorn app.main:app` processes on 127.0.0.1, as Heroku and Cloud Run run them, for the
tests of restarts (tests/test_restart.py) and of several instances (tests/jobs/test_fleet.py):
started, sent signed events, asked for their jobs, stopped with real signals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ADMIN_TOKEN, SIGNING_SECRET, next_ts
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.signing import sign

PROJECT_ROOT = Path(__file__).resolve().parents[1]
BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
# A request to a server waits this long for its answer, not httpx's 5 s: a server at niceness
# 10 beside its fleet, PostgreSQL and two busy loops can take longer to acknowledge an event
# (httpx.ReadTimeout in the fleet's pace test). What a test expects of it stays as it was.
REQUEST_TIMEOUT = httpx.Timeout(WAIT_SECONDS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """One life of `uvicorn app.main:app` on 127.0.0.1, its output in a log file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = env
        self._log = log
        self._process: asyncio.subprocess.Process | None = None
        self._events = 0

    def client(self) -> httpx.AsyncClient:
        """A client of this server whose requests wait REQUEST_TIMEOUT for their answers."""
        return httpx.AsyncClient(base_url=self.url, timeout=REQUEST_TIMEOUT)

    async def start(
        self, timeout: float = 60.0, *, healthy: bool = True, app_dir: Path | None = None
    ) -> None:
        """Start the process and wait until /healthz is 200 with tomo's user id known (with
        `healthy=False`, return at once). `app_dir`: uvicorn's --app-dir, where it finds `app`."""
        command = [sys.executable, "-m", "uvicorn", "app.main:app"]
        command += ["--app-dir", str(app_dir)] if app_dir is not None else []
        command += ["--host", "127.0.0.1", "--port", str(self.port)]
        with self._log.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                *command, env=self._env, cwd=self._log.parent, stdout=log, stderr=log
            )
        if not healthy:
            return
        deadline = time.monotonic() + timeout
        async with self.client() as client:
            while time.monotonic() < deadline:
                assert self._process.returncode is None, self.output()
                with contextlib.suppress(httpx.TransportError):
                    health = await client.get("/healthz", timeout=5)
                    if health.status_code == 200 and health.json()["bot_user_id"]:
                        return
                await asyncio.sleep(0.1)
        raise AssertionError(f"the server did not become healthy:\n{self.output()}")

    async def stop(self, timeout: float = 60.0) -> bool:
        """SIGTERM; True when the process shut down cleanly: the lifespan finished and the
        exit status is 0 or SIGTERM's own (uvicorn >= 0.29 re-raises the signal it handled
        once its graceful shutdown is complete, as a process manager expects)."""
        assert self._process is not None
        start = len(self._log.read_bytes())
        self._process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(self._process.wait(), timeout)
        self._process = None
        life = self._log.read_bytes()[start:].decode(errors="replace")
        return (
            code in (0, -signal.SIGTERM)
            and "stopped cleanly" in life
            and "Application shutdown complete" in life
            and "Traceback" not in life
        )

    async def kill(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            await asyncio.wait_for(self._process.wait(), 5)

    def output(self, characters: int = 6000) -> str:
        """The end of the log of this server's lives, without the health checks' lines."""
        lines = self._log.read_text(errors="replace").splitlines(keepends=True)
        return "".join(line for line in lines if "GET /healthz" not in line)[-characters:]

    def logged(self, text: str) -> bool:
        """Whether any of this server's lives has logged `text`."""
        return text in self._log.read_text(errors="replace")

    async def message(
        self,
        text: str,
        *,
        event_id: str | None = None,
        kind: str = "message",
        retry: int | None = None,
        event_time: int | None = None,
        **fields: Any,
    ) -> str:
        """Deliver a person's message as Slack does (`kind` app_mention for that event; the
        same `event_id` and a `retry` number for Slack's retries), to tomo's bot user UBOT;
        returns its ts."""
        ts = fields.pop("ts", None) or next_ts()
        self._events += 1
        event = {"type": kind, "channel": "C1", "user": "U1", "text": text, "ts": ts}
        event |= {"channel_type": "channel", "event_ts": ts, **fields}
        envelope = {
            "type": "event_callback",
            "team_id": "T0001",
            "event_id": event_id or f"EvRestart{self.port}x{self._events}",
            "event_time": event_time or int(time.time()),
            "event": event,
            "authorizations": [{"team_id": "T0001", "user_id": "UBOT", "is_bot": True}],
        }
        body = json.dumps(envelope).encode()
        headers = sign(body, secret=SIGNING_SECRET)
        if retry is not None:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        async with self.client() as client:
            response = await client.post("/slack/events", content=body, headers=headers)
        assert response.status_code == 200, response.text
        return ts

    async def jobs(self) -> list[dict[str, Any]]:
        async with self.client() as client:
            response = await client.get("/admin/jobs", headers=BEARER)
        return list(response.json()["jobs"])

    async def cancel(self, job_id: str) -> int:
        """DELETE /admin/jobs/{id}; the status code."""
        async with self.client() as client:
            response = await client.delete(f"/admin/jobs/{job_id}", headers=BEARER)
        return response.status_code

    async def readyz(self) -> tuple[int, dict[str, Any]] | None:
        """GET /readyz: (status, body), or None while nothing listens on the port yet."""
        try:
            async with httpx.AsyncClient(base_url=self.url) as client:
                response = await client.get("/readyz", timeout=5)
        except httpx.TransportError:
            return None
        return response.status_code, dict(response.json())

    async def health(self) -> dict[str, Any]:
        async with self.client() as client:
            return dict((await client.get("/healthz")).json())


@pytest.fixture
async def server(
    slack: FakeSlack, model: FakeModel, database_url: str, tmp_path: Path
) -> AsyncIterator[Callable[..., Server]]:
    base = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "HOME", "LANG", "TZ", "TOMO_TEST_DATABASE_URL")
    }
    made: list[Server] = []

    def make(**overrides: str) -> Server:
        env = base | {
            "PYTHONPATH": str(PROJECT_ROOT),
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_BOT_TOKEN": "xoxb-test-token",
            "SLACK_API_URL": slack.url,
            "DATABASE_URL": database_url,
            "ADMIN_TOKEN": ADMIN_TOKEN,
            "LLM_API_BASE": model.api_base,
            "LLM_API_KEY": "sk-test",
            "LLM_MODEL": "openai/test-model",
            "LLM_MAX_RETRIES": "0",
            "MIN_WAIT_SECONDS": "1.0",
            "JITTER_RATIO": "0",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LOG_LEVEL": "INFO",
            # streamed replies: tests/conversation/reply/test_streaming.py
            "STREAM_REPLIES": "false",
        }
        made.append(Server(env | overrides, tmp_path / f"server{len(made) or ''}.log"))
        return made[-1]

    yield make
    for each in made:
        await each.kill()
