"""Jobs in the worker process (JOB_WORKER=process, the default): the same replies and
judgments as inline, from another process, which is replaced if it dies."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from types import SimpleNamespace
from typing import Any

import pytest

from app.jobs.child import _learn
from app.jobs.supervisor import WorkerJobs
from app.slack.identity import Identity
from tests.conftest import StartTomo, Tomo, judgment_json, purpose_of, wait_for
from tests.conversation.reply.test_on_it import mention, settled, story
from tests.conversation.reply.test_reply import answer_by_purpose
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.memory.test_refresh import Answers, some_talk

# The worker process's supervision, not the database: on PostgreSQL the job workers of real
# processes are tried by the fleet, rolling-deploy, restart and log tests.
pytestmark = pytest.mark.one_database

IMPORT_TIMEOUT = WORKER_WAIT_SECONDS  # the worker imports LiteLLM before its first call


async def answering_worker(tomo: Tomo) -> WorkerJobs:
    """tomo's job worker, once it has answered the parent (it is past its imports)."""
    worker = tomo.runtime.worker
    assert worker is not None
    await wait_for(lambda: worker.answering, timeout=IMPORT_TIMEOUT, what="the worker's answer")
    return worker


async def test_a_mention_is_answered_from_the_worker_process(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="hi from the worker")
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = await answering_worker(tomo)
        assert worker.pid not in (None, os.getpid())
        ts = await tomo.message("<@UBOT> hello?")
        await slack.wait_for_posts(1, timeout=IMPORT_TIMEOUT)
        await wait_for(
            lambda: tomo.rows(
                "SELECT 1 FROM reply WHERE trigger_ts = :ts AND status = 'posted'", ts=ts
            ),
            what="the claim marked posted",
        )
        claims = await tomo.rows("SELECT status FROM reply")
        calls = await tomo.rows("SELECT purpose, success FROM llm_call")
    [post] = slack.posts()
    assert post["text"] == "hi from the worker" and post["thread_ts"] == ts
    assert claims == [{"status": "posted"}]
    assert [(c["purpose"], bool(c["success"])) for c in calls] == [("reply", True)]


async def test_once_the_worker_is_loaded_it_shows_the_on_it_sign_itself(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sign's Slack calls cost the worker's core, not the one that acknowledges events."""
    answer_by_purpose(model, reply="on it, from the worker")
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = await answering_worker(tomo)
        await wait_for(lambda: worker.loaded, timeout=IMPORT_TIMEOUT, what="LiteLLM loaded there")
        here: list[str] = []  # the sign calls the web process makes itself
        parent = tomo.runtime.slack
        for name in ("set_thread_status", "add_reaction", "remove_reaction"):
            made = getattr(parent, name)

            async def spy(*args: Any, _name: str = name, _made: Any = made, **kwargs: Any) -> Any:
                here.append(_name)
                return await _made(*args, **kwargs)

            monkeypatch.setattr(parent, name, spy)
        await mention(tomo)
        await settled(tomo)
    (shown, post, cleared) = story(slack)
    assert shown[0] == "assistant.threads.setStatus" and shown[1]
    assert post == ("chat.postMessage", "on it, from the worker")
    assert cleared == ("assistant.threads.setStatus", "")
    assert here == []


async def test_a_judgment_in_the_worker_sets_the_reply_timer_here(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="joining in")
    async with start_tomo(JOB_WORKER="process", MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("does anyone know a good ramen place?")
        await slack.wait_for_posts(1, timeout=IMPORT_TIMEOUT)
        decisions = await tomo.rows("SELECT should_respond, valid FROM judgment")
    assert [purpose_of(r) for r in model.requests] == ["judgment", "reply"]
    assert [p["text"] for p in slack.posts()] == ["joining in"]
    assert len(decisions) == 1 and decisions[0]["should_respond"]


async def test_a_worker_killed_mid_reply_is_replaced_and_the_reply_still_comes_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="here after all")
    model.delay(5.0)  # the first reply request hangs until the worker is gone
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = await answering_worker(tomo)
        first = worker.pid
        assert first is not None
        await tomo.message("<@UBOT> are you there?")
        await model.wait_for_requests(1, timeout=IMPORT_TIMEOUT)
        os.kill(first, signal.SIGKILL)
        await slack.wait_for_posts(1, timeout=IMPORT_TIMEOUT)
        await asyncio.sleep(0.5)  # room for a second post, were there one
        health = (await tomo.client.get("/healthz")).json()["job_worker"]
        assert health["restarts"] == 1 and health["pid"] not in (None, first)
        assert health["state"] == "running"
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM reply WHERE status = 'posted'"),
            what="the claim marked posted",
        )
        claims = await tomo.rows("SELECT status FROM reply")
    assert [p["text"] for p in slack.posts()] == ["here after all"]
    assert claims == [{"status": "posted"}]


async def test_a_hung_worker_is_killed_and_replaced_and_the_mention_still_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="back again")
    # Seconds, not less: a sound worker's loop also goes quiet for a few hundred milliseconds
    # at a time while it imports LiteLLM on a thread (full collections, long C calls).
    async with start_tomo(JOB_WORKER="process", JOB_WORKER_TIMEOUT_SECONDS=5) as tomo:
        worker = await answering_worker(tomo)
        hung = worker.pid
        assert hung is not None
        os.kill(hung, signal.SIGSTOP)  # alive and silent: its loop answers nothing
        try:
            ts = await tomo.message("<@UBOT> still there?")
            await slack.wait_for_posts(1, timeout=2 * IMPORT_TIMEOUT)
        finally:
            with contextlib.suppress(ProcessLookupError):  # killed already, if all went well
                os.kill(hung, signal.SIGCONT)
        health = (await tomo.client.get("/healthz")).json()["job_worker"]
        await wait_for(lambda: not _alive(hung), what="the hung worker gone")
    assert health["restarts"] == 1 and health["pid"] not in (None, hung)
    [post] = slack.posts()
    assert post["text"] == "back again" and post["thread_ts"] == ts


async def test_stopping_waits_for_the_reply_running_in_the_worker(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="just in time")
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = tomo.runtime.worker
        assert worker is not None
        model.delay(0.5)
        await tomo.message("<@UBOT> one more thing")
        await model.wait_for_requests(1, timeout=IMPORT_TIMEOUT)
        pid = worker.pid
    # The service stopped only after the reply was posted, and its worker with it.
    assert [p["text"] for p in slack.posts()] == ["just in time"]
    assert pid is not None
    await wait_for(lambda: not _alive(pid), what="the worker to exit")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_the_periodic_memory_job_runs_in_the_worker(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    Answers(model)
    async with start_tomo(
        JOB_WORKER="process", MIN_WAIT_SECONDS=60, MEMORY_UPDATE_INTERVAL_SECONDS=0.5
    ) as tomo:
        await some_talk(tomo)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM memory WHERE scope = 'workspace'"),
            timeout=IMPORT_TIMEOUT,
            what="memories written by the worker",
        )
        kinds = {(r["scope"], r["kind"]) for r in await tomo.rows("SELECT * FROM memory")}
    assert ("thread", "summary") in kinds and ("channel", "long_term") in kinds
    assert all(purpose_of(r) == "memory" for r in model.requests)


def test_the_worker_takes_each_jobs_identity_from_the_parent() -> None:
    """The parent may know only the bot user id (from an event) at first, and the bot id once
    auth.test answers: the worker follows, it does not keep the first it heard."""
    runtime = SimpleNamespace(identity=Identity())
    _learn(runtime, {"user_id": "UBOT", "bot_id": None, "team_id": "T0001"})  # type: ignore[arg-type]
    url = "https://fake.slack.test/"  # the workspace's address, for permalinks
    _learn(runtime, {"user_id": "UBOT", "bot_id": "BBOT", "team_id": "T0001", "url": url})  # type: ignore[arg-type]
    _learn(runtime, None)  # type: ignore[arg-type]
    assert runtime.identity.snapshot() == {
        "user_id": "UBOT",
        "bot_id": "BBOT",
        "team_id": "T0001",
        "url": url,
    }
