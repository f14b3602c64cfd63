"""GET /readyz (docs/how-tomo-works.md#interfaces): 503 with the reason until this instance can
compose a reply without waiting for an import, 200 after; with the real server process, started
as Cloud Run and Heroku start it, asked from the moment it listens."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import StartTomo
from tests.fakes import FakeModel, FakeSlack
from tests.processes import PROJECT_ROOT, Server, free_port, server

__all__ = ["server"]  # the fixture
pytestmark = pytest.mark.one_database  # /readyz and /metrics: not the database's

# A start imports LiteLLM (seconds; a job worker does it at a lower CPU priority): generous.
READY_TIMEOUT = 120.0

Answer = tuple[int, dict[str, Any]]


async def answers_until_ready(tomo: Server, *, timeout: float = READY_TIMEOUT) -> list[Answer]:
    """Every /readyz answer from the first one the server gives until the first 200."""
    answers: list[Answer] = []
    deadline = time.monotonic() + timeout
    while not answers or answers[-1][0] != 200:
        assert time.monotonic() < deadline, f"/readyz never said 200: {answers[-3:]}\n" + (
            tomo.output()
        )
        answer = await tomo.readyz()
        if answer is not None:
            assert answer[0] in (200, 503), answer
            answers.append(answer)
        await asyncio.sleep(0.05)
    return answers


def assert_starting_then_ready(answers: list[Answer]) -> None:
    *starting, ready = answers
    assert starting, "the first answer was already 200: nothing was still loading"
    for status, body in starting:
        assert status == 503 and body["status"] == "starting", (status, body)
        assert isinstance(body["reason"], str) and body["reason"], body
    assert ready == (200, {"status": "ready"})


@pytest.mark.parametrize("job_worker", ["process", "inline"])
async def test_readyz_says_503_with_the_reason_until_litellm_is_loaded_then_200(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel, job_worker: str
) -> None:
    model.enqueue("here already!")
    tomo = server(JOB_WORKER=job_worker)
    await tomo.start(healthy=False)
    answers = await answers_until_ready(tomo)
    log = tomo.output()
    # The moment it says 200, a mention is answered (by a job that imports nothing).
    mention = await tomo.message("<@UBOT> are you up?")
    (post,) = await slack.wait_for_posts(1, timeout=30)
    again = await tomo.readyz()
    assert await tomo.stop(), tomo.output()
    assert_starting_then_ready(answers)
    reasons = {body["reason"] for _, body in answers[:-1]}
    if job_worker == "process":
        assert reasons <= {
            "the job worker process is starting",
            "the job worker is still importing LiteLLM and slack-sdk",
        }
        assert "has loaded its libraries: ready to reply" in log
    else:
        assert reasons == {"LiteLLM and slack-sdk are still being imported"}
    assert "LiteLLM and slack-sdk loaded in" in tomo.output()
    assert again == (200, {"status": "ready"})
    assert post["thread_ts"] == mention and post["text"] == "here already!"


async def test_readyz_says_503_while_a_dead_job_worker_is_replaced(
    server: Callable[..., Server], slack: FakeSlack
) -> None:
    tomo = server()
    await tomo.start()
    await answers_until_ready(tomo)
    first = (await tomo.health())["job_worker"]["pid"]
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + READY_TIMEOUT
    answer = await tomo.readyz()
    while answer is None or answer[0] == 200:  # until the parent has seen it go
        assert time.monotonic() < deadline, tomo.output()
        await asyncio.sleep(0.05)
        answer = await tomo.readyz()
    answers = [answer, *await answers_until_ready(tomo)]
    second = (await tomo.health())["job_worker"]["pid"]
    assert await tomo.stop(), tomo.output()
    assert_starting_then_ready(answers)
    assert second not in (None, first)


async def test_readyz_says_200_while_slack_is_unreachable(server: Callable[..., Server]) -> None:
    """Slack unreachable from the start: tomo keeps acknowledging and recording meanwhile, and
    its replies wait for Slack whatever the probe says, so the probe does not hold it back."""
    tomo = server(JOB_WORKER="inline", SLACK_API_URL=f"http://127.0.0.1:{free_port()}/api/")
    await tomo.start(healthy=False)
    answers = await answers_until_ready(tomo)
    health = await tomo.health()
    assert await tomo.stop(), tomo.output()
    assert_starting_then_ready(answers)
    assert health["slack"] == "unreachable"


async def test_readyz_in_process(start_tomo: StartTomo) -> None:
    """The same answer through the app in this process, with no bearer token."""
    async with start_tomo() as tomo:
        deadline = time.monotonic() + READY_TIMEOUT
        response = await tomo.client.get("/readyz")
        while response.status_code != 200 and time.monotonic() < deadline:
            assert response.json()["status"] == "starting"
            await asyncio.sleep(0.05)
            response = await tomo.client.get("/readyz")
    assert response.status_code == 200 and response.json() == {"status": "ready"}


async def test_started_from_another_folder_with_app_dir_its_job_worker_finds_the_app_too(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    """`uvicorn --app-dir /srv/tomo app.main:app` run elsewhere (a systemd unit, a supervisor):
    nothing on PYTHONPATH, and the job worker process imports the same `app` as the server."""
    model.enqueue("found my way")
    tomo = server(PYTHONPATH="")
    await tomo.start(healthy=False, app_dir=PROJECT_ROOT)
    answers = await answers_until_ready(tomo)
    await tomo.message("<@UBOT> where are you running?")
    (post,) = await slack.wait_for_posts(1, timeout=30)
    log = tomo.output()
    assert await tomo.stop(), tomo.output()
    assert answers[-1] == (200, {"status": "ready"})
    assert "No module named 'app'" not in log and "job worker exited" not in log
    assert post["text"] == "found my way"
