"""A scheduled digest with real `uvicorn app.main:app` processes (docs/how-tomo-works.md#digests):
due while tomo was down, then cut short by SIGKILL while the model writes it, it is posted
once by the next start, and never again; on a two-instance Procrastinate fleet it is taken by
one instance, and when that instance is killed mid-way, the other posts it, once.

The clock is moved on in the database, the truth: the schedule's next due time (and, on the
fleet, the Procrastinate job's time) is set a moment ahead, as if the day had passed."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.conftest import TEST_DATABASE_URL, wait_for
from tests.digest.helpers import database_rows, is_digest
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.fakes.response_url import FakeResponseUrl
from tests.processes import Server, server
from tests.slash import command_form, signed

__all__ = ["server"]  # the fixture

DIGEST = "**Lunch**\n- Decided: ramen [1]"


def digest_or_nothing(request: dict[str, Any]) -> str:
    return DIGEST if is_digest(request) else '{"should_respond": false, "reason": "no"}'


async def command(instance: Server, text: str, *, response_url: str) -> str:
    body = urlencode(command_form(text, response_url=response_url)).encode()
    async with instance.client() as client:
        answer = await client.post("/slack/commands", content=body, headers=signed(body))
    assert answer.status_code == 200, answer.text
    return str(answer.json()["text"])


def hold_digests(model: FakeModel) -> threading.Event:
    """The model stand-in holds its answer to every digest request until the event is set; a
    judgment's or a memory refresh's, which a start may ask for first, is answered at once."""
    release = threading.Event()
    model.hold(lambda _number, request: 0.0 if release.is_set() or not is_digest(request) else 1.0)
    return release


def digest_requests(model: FakeModel) -> int:
    return sum(1 for request in model.requests if is_digest(request))


async def test_a_digest_due_while_down_and_killed_mid_way_is_posted_once(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    database_url: str,
) -> None:
    model.responder = digest_or_nothing
    tomo = server(MIN_WAIT_SECONDS="600")  # no judgment comes in the way
    await tomo.start(timeout=WORKER_WAIT_SECONDS)
    await tomo.message("ramen on Friday?", ts=f"{time.time() - 3600:.6f}")
    answer = await command(tomo, "digest daily 09:00", response_url=hooks.new_url())
    assert answer.startswith("OK, I'll post a digest")
    assert [j["id"] for j in await tomo.jobs() if j["kind"] == "digest"] == ["digest:C1"]
    assert await tomo.stop(), tomo.output()

    # The day passes while tomo is down; at the start the digest is due, and it is killed
    # while the model writes it.
    database_rows(database_url, "UPDATE digest_schedule SET next_due_at = :t", t=time.time() - 60)
    release = hold_digests(model)
    await tomo.start(timeout=WORKER_WAIT_SECONDS)
    await wait_for(lambda: digest_requests(model) == 1, timeout=WORKER_WAIT_SECONDS)
    await tomo.kill()
    release.set()
    assert slack.posts() == []

    await tomo.start(timeout=WORKER_WAIT_SECONDS)
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(1.0)
    jobs = [j for j in await tomo.jobs() if j["kind"] == "digest"]
    assert await tomo.stop(), tomo.output()
    await tomo.start(timeout=WORKER_WAIT_SECONDS)  # and once more: nothing is owed
    await asyncio.sleep(2.0)
    assert await tomo.stop(), tomo.output()
    posts = slack.posts()
    assert len(posts) == 1 and posts[0]["thread_ts"] is None
    assert str(posts[0]["text"]).startswith("*Digest of #general*")
    assert digest_requests(model) == 2  # the killed run's, and the one that posted
    runs = database_rows(database_url, "SELECT status, messages FROM digest_run")
    assert runs == [{"status": "posted", "messages": 1}]
    (schedule,) = database_rows(database_url, "SELECT next_due_at FROM digest_schedule")
    assert schedule["next_due_at"] > time.time() and len(jobs) == 1
    assert tomo.logged("digest due") and tomo.logged("(taken over)")


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_on_a_two_instance_fleet_a_due_digest_is_posted_once_even_when_its_instance_dies(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    database_url: str,
) -> None:
    model.responder = digest_or_nothing
    fleet = {
        "JOB_BACKEND": "procrastinate",
        "JOB_WORKER": "inline",  # each instance one process: a SIGKILL takes its jobs with it
        "JOB_STALLED_SECONDS": "3",
        "MIN_WAIT_SECONDS": "600",
    }
    a, b = server(**fleet), server(**fleet)
    await asyncio.gather(a.start(timeout=WORKER_WAIT_SECONDS), b.start(timeout=WORKER_WAIT_SECONDS))
    await a.message("ramen on Friday?", ts=f"{time.time() - 3600:.6f}")
    await command(a, "digest daily 09:00", response_url=hooks.new_url())
    for instance in (a, b):  # either instance lists the fleet's one digest job
        assert [j["id"] for j in await instance.jobs() if j["kind"] == "digest"] == ["digest:C1"]

    release = hold_digests(model)  # still writing when its instance dies
    due = time.time() + 2
    database_rows(database_url, "UPDATE digest_schedule SET next_due_at = :t", t=due)
    database_rows(
        database_url,
        "UPDATE procrastinate_jobs SET scheduled_at = to_timestamp(:t)"
        " WHERE queueing_lock = 'digest:C1' AND status = 'todo'",
        t=due,
    )
    await wait_for(lambda: digest_requests(model) == 1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(1.0)
    assert digest_requests(model) == 1  # one instance took it
    (doomed,) = [i for i in (a, b) if i.logged("digest due")]
    (survivor,) = [i for i in (a, b) if i is not doomed]
    await doomed.kill()
    release.set()
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(2.0)
    posts = slack.posts()
    assert len(posts) == 1 and str(posts[0]["text"]).startswith("*Digest of #general*")
    assert digest_requests(model) == 2
    assert survivor.logged("(taken over)")
    jobs = [j for j in await survivor.jobs() if j["kind"] == "digest"]
    assert [j["id"] for j in jobs] == ["digest:C1"] and jobs[0]["seconds_left"] > 60
    assert await survivor.stop(), survivor.output()
    runs = database_rows(database_url, "SELECT status FROM digest_run")
    assert runs == [{"status": "posted"}]
