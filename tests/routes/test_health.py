"""GET /healthz (docs/how-tomo-works.md#interfaces): 200 while the database answers and the
scheduler runs, else 503."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from pathlib import Path

import pytest
from sqlalchemy import make_url

from app.db.engine import create_engine
from app.slack import identity
from tests.conftest import ADMIN_TOKEN, StartTomo, wait_for
from tests.fakes import FakeSlack


async def test_healthy_service_reports_database_scheduler_and_pending_jobs(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("something to judge later")
        response = await tomo.client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok" and body["scheduler"] == "running"
    assert body["backend"] == "apscheduler"
    assert body["slack"] == "ok"
    assert body["pending_jobs"] == {"judgment": 1, "reply": 0}
    assert body["job_worker"] == {"mode": "inline"}


async def test_unreachable_database_gives_503_and_recovery_gives_200(
    start_tomo: StartTomo, database_url: str, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        database_url = f"sqlite:///{tmp_path / 'db' / 'tomo.db'}"
    async with start_tomo(DATABASE_URL=database_url) as tomo:
        runtime = tomo.runtime
        assert (await tomo.client.get("/healthz")).status_code == 200
        # Start-up's channel sync done, so no connection is checked out while it goes away.
        await wait_for(lambda: tomo.rows("SELECT 1 FROM channel"), what="the channel sync")
        await asyncio.sleep(0.1)
        if database_url.startswith("sqlite"):
            # The database's directory goes away (a lost volume): no connection can open it.
            await runtime.engine.dispose()
            folder = Path(make_url(database_url).database or "").parent
            os.rename(folder, folder.with_name("moved"))
            down = await tomo.client.get("/healthz")
            os.rename(folder.with_name("moved"), folder)
        else:
            # The server stops answering: a closed port on this machine.
            engine = runtime.engine
            runtime.engine = create_engine("postgresql://nobody@127.0.0.1:9/none")
            down = await tomo.client.get("/healthz")
            await runtime.engine.dispose()
            runtime.engine = engine
        up = await tomo.client.get("/healthz")
    assert down.status_code == 503
    assert down.json()["status"] == "unavailable" and down.json()["database"] == "unreachable"
    assert up.status_code == 200


async def test_stopped_scheduler_gives_503(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        tomo.memory_timers.shutdown()
        response = await tomo.client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["scheduler"] == "stopped"


def identity_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "app.slack.identity" and r.levelno == level
    ]


async def test_a_refused_token_is_degraded_logged_once_and_retried_slowly(
    start_tomo: StartTomo,
    slack: FakeSlack,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(identity, "AUTH_RETRY_SECONDS", 0.4)  # 5 minutes in production
    # What Slack answers a wrong or revoked token: HTTP 200 with ok false (Slack's docs,
    # "auth.test" and the common errors; slack-sdk raises SlackApiError for it).
    slack.fail("auth.test", error="invalid_auth", times=1000)
    started = time.monotonic()
    async with start_tomo(wait_identity=False) as tomo:
        await wait_for(lambda: tomo.runtime.identity.slack == "unauthorized", what="refusal")
        refused = await tomo.client.get("/healthz")
        page = await tomo.client.get("/admin", auth=("admin", ADMIN_TOKEN))
        await asyncio.sleep(1.0)
        calls = len(slack.calls_to("auth.test"))
        periods = (time.monotonic() - started) / 0.4  # however slow the machine made this
        errors = identity_lines(caplog, logging.ERROR)
        slack.reset()  # the operator fixed the token
        slack.add_channel("C1", "general")
        await wait_for(lambda: tomo.runtime.identity.slack == "ok", what="Slack taking it")
        fixed = await tomo.client.get("/healthz")
        page_after = await tomo.client.get("/admin", auth=("admin", ADMIN_TOKEN))
    assert refused.status_code == 200  # not a restart loop on a platform
    assert refused.json()["status"] == "degraded"
    assert refused.json()["slack"] == "unauthorized"
    assert refused.json()["database"] == "ok" and refused.json()["bot_user_id"] is None
    assert 2 <= calls <= periods + 1, (calls, periods)  # a try per retry period, no storm
    [error] = errors  # once, however many tries
    assert "invalid_auth" in error and "SLACK_BOT_TOKEN" in error
    assert "xoxb-test-token" not in caplog.text
    assert fixed.json()["status"] == "ok" and fixed.json()["slack"] == "ok"
    assert fixed.json()["bot_user_id"] == "UBOT"
    # The admin page says so at the top, with what to do; not once the token is taken again.
    assert page.status_code == 200
    assert 'id="slack-banner"' in page.text and "Slack refuses the bot token" in page.text
    assert "(invalid_auth)" in page.text and "SLACK_BOT_TOKEN" in page.text
    assert 'id="slack-banner"' not in page_after.text


async def test_an_unreachable_slack_is_degraded_and_retried_with_a_backoff(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))  # bound, never listening: every connection is refused
        url = f"http://127.0.0.1:{dead.getsockname()[1]}/api/"
        async with start_tomo(SLACK_API_URL=url, wait_identity=False) as tomo:
            await wait_for(
                lambda: tomo.runtime.identity.slack_error is not None, what="a failed auth.test"
            )
            response = await tomo.client.get("/healthz")
            page = await tomo.client.get("/admin", auth=("admin", ADMIN_TOKEN))
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["slack"] == "unreachable"
    assert 'id="slack-banner"' in page.text and "Slack is unreachable" in page.text
    warnings = identity_lines(caplog, logging.WARNING)
    assert warnings[0].startswith("auth.test failed, retrying in 1 s")  # then 2, 4 ... 60 s
    assert not identity_lines(caplog, logging.ERROR)


async def test_a_token_revoked_while_running_shows_at_the_next_check(
    start_tomo: StartTomo, slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(identity, "CHECK_SECONDS", 0.2)  # 15 minutes in production
    async with start_tomo() as tomo:
        assert (await tomo.client.get("/healthz")).json()["slack"] == "ok"
        slack.fail("auth.test", error="token_revoked", times=1000)
        await wait_for(lambda: tomo.runtime.identity.slack == "unauthorized", what="the check")
        response = await tomo.client.get("/healthz")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["slack"]) == ("degraded", "unauthorized")


NO_KEY = {"LLM_API_KEY": None, "LLM_API_BASE": None}
LOADING = 60  # seconds for LiteLLM's import on a busy machine


async def test_no_model_key_is_one_warning_at_start_up_and_shows_on_healthz(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="app.llm.model_keys")
    async with start_tomo(**NO_KEY) as tomo:
        await wait_for(lambda: tomo.runtime.model_key, timeout=LOADING, what="the key check")
        response = await tomo.client.get("/healthz")
    problem = "no LLM_API_BASE or LLM_API_KEY, and OPENAI_API_KEY is not set for openai/test-model"
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["model_key"] == problem
    warnings = [r.getMessage() for r in caplog.records if r.name == "app.llm.model_keys"]
    assert len(warnings) == 1 and warnings[0].startswith(f"model key missing: {problem}. ")


async def test_the_provider_key_in_the_environment_is_enough(
    start_tomo: StartTomo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-in-the-environment")
    async with start_tomo(**NO_KEY) as tomo:
        await wait_for(lambda: tomo.runtime.model_key, timeout=LOADING, what="the key check")
        body = (await tomo.client.get("/healthz")).json()
    assert body["model_key"] == "ok" and body["status"] == "ok"
    assert not [r for r in caplog.records if r.name == "app.llm.model_keys"]


async def test_the_job_worker_checks_the_key_its_model_needs(start_tomo: StartTomo) -> None:
    async with start_tomo(
        JOB_WORKER="process", LLM_MODEL="anthropic/claude-3-5-haiku-latest", **NO_KEY
    ) as tomo:
        worker = tomo.runtime.worker
        assert worker is not None
        await wait_for(lambda: worker.model_key, timeout=LOADING, what="the worker's key check")
        body = (await tomo.client.get("/healthz")).json()
    assert body["status"] == "degraded"
    assert body["model_key"] == (
        "no LLM_API_BASE or LLM_API_KEY, and ANTHROPIC_API_KEY is not set for "
        "anthropic/claude-3-5-haiku-latest"
    )
