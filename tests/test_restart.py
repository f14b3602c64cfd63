"""Restarts lose nothing and answer nothing twice (docs/how-tomo-works.md#restarts), with the real
server process: `python -m uvicorn app.main:app`, stopped with SIGTERM as Heroku and Cloud Run
do."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import text

from app.db.engine import create_engine
from tests.conftest import (
    StartTomo,
    judgment_json,
    next_ts,
    purpose_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.processes import Server, server

__all__ = ["server"]  # the fixture


def answer_by_purpose(model: FakeModel, *, judgment: str, reply: str = "I'm back!") -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment if purpose_of(request) == "judgment" else reply

    model.responder = responder


async def test_sigterm_before_a_judgment_then_restart_judges_and_replies_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0))
    tomo = server(MIN_WAIT_SECONDS="10")  # still pending at the SIGTERM, however busy the machine
    await tomo.start()
    await tomo.message("is anyone around this weekend?")
    assert [job["id"] for job in await tomo.jobs() if job["kind"] == "judgment"] == ["judgment:C1:"]
    assert await tomo.stop(), tomo.output()
    assert model.requests == []

    await tomo.start()
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(0.5)
    assert await tomo.stop(), tomo.output()
    assert len(slack.posts()) == 1 and slack.posts()[0]["thread_ts"] is None
    assert [purpose_of(r) for r in model.requests] == ["judgment", "reply"]


async def test_sigterm_finishes_a_reply_in_progress_and_a_delayed_reply_survives(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    # The reply is due 10 s after its judgment: long enough to see its timer on a busy machine.
    answer_by_purpose(model, judgment=judgment_json(True, delay=10))
    tomo = server()
    await tomo.start()
    await tomo.message("what a quiet day")
    # Polled gently: the server is importing LiteLLM on a thread meanwhile.
    await wait_for_reply_job(tomo, timeout=WORKER_WAIT_SECONDS)
    model.delay(1.0)  # the mention's reply is still being written when SIGTERM comes
    mention = await tomo.message("<@UBOT> hello!", channel="C2")
    await model.wait_for_requests(2, timeout=WORKER_WAIT_SECONDS)
    assert await tomo.stop(), tomo.output()
    posts = slack.posts()
    assert len(posts) == 1 and posts[0]["thread_ts"] == mention  # finished, not cut off

    await tomo.start()
    await slack.wait_for_posts(2, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(0.5)
    jobs = await tomo.jobs()
    assert await tomo.stop(), tomo.output()
    posts = slack.posts()
    assert len(posts) == 2  # the mention was not answered again
    assert posts[1]["channel"] == "C1" and posts[1]["thread_ts"] is None
    assert [purpose_of(r) for r in model.requests] == ["judgment", "reply", "reply"]
    assert not [job for job in jobs if job["kind"] in ("judgment", "reply")]


async def test_a_reply_cancelled_before_posting_is_answered_after_the_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A reply still running when the stop's grace ran out was cancelled: its claim is taken
    over after the restart and the mention answered, once."""
    model.delay(1.0)
    async with start_tomo() as tomo:
        mention = await tomo.message("<@UBOT> are you still there?")
        await model.wait_for_requests(1)
        running = tomo.memory_timers.running_jobs
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        left = await tomo.rows("SELECT status FROM reply")
    # Released, not left `claimed`: owed still, nothing posted.
    assert left == [{"status": "interrupted"}] and slack.posts() == []

    async with start_tomo() as tomo:
        (post,) = await slack.wait_for_posts(1)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted'"),
            what="the finished reply",
        )
        await asyncio.sleep(0.3)
        rows = await tomo.rows("SELECT status, trigger_ts FROM reply")
    assert post["thread_ts"] == mention and len(slack.posts()) == 1
    assert rows == [{"status": "posted", "trigger_ts": mention}]


async def test_a_reply_posted_but_not_marked_finished_is_not_posted_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    async with start_tomo() as tomo:
        await tomo.message("<@UBOT> hello")
        await slack.wait_for_posts(1)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted'"),
            what="the finished reply",
        )
        # As if the process stopped between storing the post and finishing the claim.
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(text("UPDATE reply SET status = 'claimed'"))

    async with start_tomo() as tomo:
        await asyncio.sleep(0.5)
        jobs = [job for job in (await tomo.runtime.timers.list()) if job.kind == "reply"]
    assert len(slack.posts()) == 1 and len(model.requests) == 1 and jobs == []


async def wait_for_reply_job(tomo: Server, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if any(job["kind"] == "reply" for job in await tomo.jobs()):
            return
        assert time.monotonic() < deadline, f"no reply timer:\n{tomo.output()}"
        await asyncio.sleep(0.2)


async def test_the_first_mention_after_a_start_shows_on_it_then_replies(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    """With the job worker (the default), the reply waits for a process that may still be
    importing LiteLLM; the sign comes from the web process all the same. (How soon it comes,
    a time budget, is bench.onit's: `first_max_ms`.)"""
    model.enqueue("here!")
    tomo = server()
    await tomo.start()
    ts = next_ts()
    slack.add_message("C1", ts=ts, text="<@UBOT> first!", user="U1")
    await tomo.message("<@UBOT> first!", ts=ts)
    await wait_for(lambda: slack.calls_to("assistant.threads.setStatus"), what="the sign")
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await wait_for(
        lambda: len(slack.calls_to("assistant.threads.setStatus")) == 2,
        what="the sign cleared",
    )
    assert await tomo.stop(), tomo.output()
    methods = [
        m for m, _ in slack.calls if m in ("assistant.threads.setStatus", "chat.postMessage")
    ]
    assert methods == [
        "assistant.threads.setStatus",
        "chat.postMessage",
        "assistant.threads.setStatus",
    ]
    assert slack.thread_status("C1", ts) == ""


async def test_killed_while_the_sign_is_up_the_restart_answers_once_and_clears_it(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel, database_url: str
) -> None:
    model.delay(5.0)  # the reply is still being written when tomo is killed
    slack.add_channel("D1", "", is_im=True, user="U1")
    tomo = server()
    await tomo.start()
    ts = next_ts()
    slack.add_message("D1", ts=ts, text="are you there?", user="U1")
    await tomo.message("are you there?", channel="D1", channel_type="im", ts=ts)
    await wait_for(lambda: slack.reactions("D1", ts) == ["eyes"], what="the sign")
    await model.wait_for_requests(1, timeout=WORKER_WAIT_SECONDS)
    await tomo.kill()  # kill -9: no chance to clear anything

    await tomo.start()
    (post,) = await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await wait_for(lambda: slack.reactions("D1", ts) == [], what="the sign cleared")
    await asyncio.sleep(0.5)
    assert await tomo.stop(), tomo.output()
    assert post["channel"] == "D1" and len(slack.posts()) == 1
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            left = (await connection.execute(text("SELECT * FROM on_it"))).all()
            claims = (await connection.execute(text("SELECT status FROM reply"))).scalars().all()
    finally:
        await engine.dispose()
    assert left == [] and claims == ["posted"]
