"""LOG_FORMAT=json: one JSON object per line, with the event id, channel, thread and job id where
they apply, and no secret anywhere. Checked on tomo run like production: uvicorn in a process."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from app.observability.logs import JsonFormatter, TextFormatter, log_context
from tests.conftest import ADMIN_TOKEN, SIGNING_SECRET, judgment_json, next_ts, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS, WORKER_WAIT_SECONDS
from tests.signing import sign

PROJECT_ROOT = Path(__file__).resolve().parents[1]
BOT_TOKEN = "xoxb-secret-bot-token-123"
LLM_KEY = "sk-secret-model-key-456"


def signed_event(event: dict[str, Any], event_id: str) -> tuple[bytes, dict[str, str]]:
    envelope = {"type": "event_callback", "team_id": "T0001", "event_id": event_id, "event": event}
    body = json.dumps(envelope).encode()
    return body, sign(body, secret=SIGNING_SECRET)


def wait_until(predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def healthy(client: httpx.Client, process: subprocess.Popen[bytes], stderr_log: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"tomo exited with {process.returncode}: {stderr_log.read_text()}")
    try:
        return client.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def test_json_logs_of_a_real_process_carry_context_and_no_secrets(
    slack: FakeSlack, model: FakeModel, database_url: str, tmp_path: Path
) -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment_json(True, delay=0) if purpose_of(request) == "judgment" else "hello!"

    model.responder = responder
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.set_inheritable(True)
    port = listener.getsockname()[1]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(PROJECT_ROOT),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_API_URL": slack.url,
        "DATABASE_URL": database_url,
        "ADMIN_TOKEN": ADMIN_TOKEN,
        "LLM_MODEL": "openai/test-model",
        "LLM_API_BASE": model.api_base,
        "LLM_API_KEY": LLM_KEY,
        "LLM_MAX_RETRIES": "0",
        "MIN_WAIT_SECONDS": "0.2",
        "JITTER_RATIO": "0",
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "DEBUG",
    }
    command = [sys.executable, "-m", "uvicorn", "app.main:app", "--fd", str(listener.fileno())]
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            cwd=tmp_path,  # no .env file here
            env=env,
            stdout=stderr,
            stderr=stderr,
            pass_fds=(listener.fileno(),),
        )
    listener.close()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=WAIT_SECONDS) as client:
            wait_until(
                lambda: healthy(client, process, stderr_path),
                timeout=WORKER_WAIT_SECONDS,
                what="tomo",
            )
            # The job worker imports LiteLLM first: a minute or more on a CPU-starved machine.
            wait_until(
                lambda: client.get("/readyz").status_code == 200,
                timeout=WORKER_WAIT_SECONDS,
                what="/readyz 200",
            )
            ts = next_ts()
            message = {"type": "message", "channel": "C1", "user": "U1", "text": "any tips?"}
            body, headers = signed_event({**message, "ts": ts, "channel_type": "channel"}, "EvLOG1")
            assert client.post("/slack/events", content=body, headers=headers).is_success
            other = {**message, "channel": "C2", "ts": next_ts(), "channel_type": "channel"}
            body2, headers2 = signed_event(other, "EvLOG2")
            assert client.post("/slack/events", content=body2, headers=headers2).is_success
            forged = client.post("/slack/events", content=body, headers=sign(body, secret="wrong"))
            assert forged.status_code == 401
            client.get("/admin/jobs", headers={"Authorization": "Bearer wrong"})
            wait_until(
                lambda: len(slack.posts()) == 2, timeout=WORKER_WAIT_SECONDS, what="two replies"
            )
            time.sleep(0.3)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=WAIT_SECONDS)
    output = stderr_path.read_text()
    lines = [line for line in output.splitlines() if line.strip()]

    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
    assert all({"time", "severity", "logger", "message"} <= set(r) for r in records)
    # uvicorn's first lines, from before the app's lifespan, are JSON too.
    assert [(r["logger"], r["message"]) for r in records[:2]] == [
        ("uvicorn.error", f"Started server process [{process.pid}]"),
        ("uvicorn.error", "Waiting for application startup."),
    ]
    # The job worker (`python -m app.wiring.worker`) logs under its module's name.
    assert any(
        r["logger"] == "app.wiring.worker" and r["message"].startswith("job worker ready")
        for r in records
    )
    assert not [r for r in records if r["logger"] == "__main__"]

    routed = [r for r in records if "routed to judgment" in r["message"]]
    assert routed and routed[0]["event_id"] == "EvLOG1"
    assert (routed[0]["channel"], routed[0]["thread_ts"]) == ("C1", "")
    judgment = [r for r in records if r.get("job_id") == "judgment:C1:"]
    assert any(r["message"].startswith("judgment should_respond=True") for r in judgment)
    assert any(r["message"].startswith("llm judgment") for r in judgment)
    assert all((r["channel"], r["thread_ts"]) == ("C1", "") for r in judgment)
    # A job's lines carry no event id: not even that of the event that woke the scheduler.
    assert not [r for r in records if "job_id" in r and "event_id" in r]
    routed_c2 = [
        r for r in records if "routed to judgment" in r["message"] and r["channel"] == "C2"
    ]
    assert routed_c2 and routed_c2[0]["event_id"] == "EvLOG2"
    reply = [r for r in records if r.get("job_id") == "reply:C1:"]
    assert any(r["message"].startswith("replied with 1 message") for r in reply)
    assert any("signature" in r["message"] and r["severity"] == "WARNING" for r in records)
    assert any(r["message"] == "stopped cleanly" for r in records)
    # uvicorn's own lines are JSON too; its access line is kept quiet (tomo logs each event).
    assert any(r["logger"].startswith("uvicorn") for r in records)
    assert not [r for r in records if r["logger"] == "uvicorn.access"]

    for secret in (SIGNING_SECRET, BOT_TOKEN, LLM_KEY, ADMIN_TOKEN):
        assert secret not in output


def test_log_context_nests_a_job_starts_afresh_and_both_formats_show_it() -> None:
    stream = io.StringIO()
    json_handler, text_handler = logging.StreamHandler(stream), logging.StreamHandler(stream)
    json_handler.setFormatter(JsonFormatter())
    text_handler.setFormatter(TextFormatter())
    logger = logging.getLogger("tests.logs.context")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    from app.observability.logs import _ContextFilter

    for handler in (json_handler, text_handler):
        handler.addFilter(_ContextFilter())
        logger.addHandler(handler)
    try:
        with log_context(event_id="Ev9", channel="C9"):
            with log_context(thread_ts="1.2", channel=None):
                logger.info("inner")
                with log_context(job_id="reply:C9:1.2", channel="C9", thread_ts="1.2"):
                    logger.info("job")
        logger.info("outside")
    finally:
        for handler in (json_handler, text_handler):
            logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    json_inner, text_inner, json_job, text_job, json_outside, text_outside = lines
    inner = json.loads(json_inner)
    assert (inner["event_id"], inner["channel"], inner["thread_ts"]) == ("Ev9", "C9", "1.2")
    assert "job_id" not in inner
    assert text_inner.endswith("inner [event_id=Ev9 channel=C9 thread_ts=1.2]")
    job = json.loads(json_job)
    assert (job["job_id"], job["channel"], job["thread_ts"]) == ("reply:C9:1.2", "C9", "1.2")
    assert "event_id" not in job  # a job is not the event that woke the scheduler
    assert text_job.endswith("job [channel=C9 thread_ts=1.2 job_id=reply:C9:1.2]")
    assert "event_id" not in json.loads(json_outside)
    assert text_outside.endswith("outside")
