"""Rolling deploys, again and again (docs/how-tomo-works.md#several-instances): real `uvicorn
app.main:app` processes with JOB_BACKEND=procrastinate on one PostgreSQL database, each deploy
starting two new instances while the two old ones, in the middle of slow replies, get SIGTERM.
A reply that ends within the stopping instance's grace is posted by it; one that does not is
handed back and posted by a new instance. Whatever JOB_STALLED_SECONDS is, every mention is
answered exactly once, none twice, none lost, and no job runs on a second instance while its
runner lives (a reply ending within the grace is asked of the model once)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import TEST_DATABASE_URL, purpose_of, turns_of
from tests.fakes import FakeModel, FakeSlack
from tests.jobs.test_fleet import fleet
from tests.processes import Server, server

__all__ = ["server"]  # the fixture

pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")

# Deploys per test: 2 keeps the PostgreSQL run short; TOMO_TEST_DEPLOYS=10 repeats more.
DEPLOYS = int(os.environ.get("TOMO_TEST_DEPLOYS", "2"))
MENTIONS_PER_DEPLOY = 4  # half end within the grace, half are handed back
GRACE_SECONDS = 8.0  # app.jobs.timers.STOP_GRACE_SECONDS
REPLY_JOBS = "SELECT status FROM procrastinate_jobs WHERE task_name = 'reply'"
TAG = re.compile(r"question (d\d+m\d+)")


class SlowReplies:
    """The model stand-in's pace: a mention's first reply request is held until the test
    releases it (a time from now, or never: the job is then cut off at the grace's end);
    a reply asked again, by the instance the job was handed back to, is answered at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: dict[str, int] = {}  # tag -> number of its first request
        self._release: dict[str, float] = {}  # tag -> monotonic time its first is answered
        self._asked: dict[str, set[int]] = {}  # tag -> the numbers of its reply requests

    def __call__(self, number: int, request: dict[str, Any]) -> float:
        if purpose_of(request) != "reply":
            return 0.0
        # The mention answered is the last turn (memories in the prompt may name others).
        found = TAG.search(json.dumps(turns_of(request)[-1]))
        if found is None:
            return 0.0
        with self._lock:
            tag = found.group(1)
            self._asked.setdefault(tag, set()).add(number)
            if self._first.setdefault(tag, number) != number:
                return 0.0
            return self._release.get(tag, float("inf")) - time.monotonic()

    def started(self, tags: list[str]) -> bool:
        with self._lock:
            return all(tag in self._first for tag in tags)

    def asked(self, tag: str) -> int:
        """How many times the model was asked for the mention's reply."""
        with self._lock:
            return len(self._asked.get(tag, ()))

    def release(self, tag: str, *, after: float) -> None:
        with self._lock:
            self._release[tag] = time.monotonic() + after


async def mention(
    slack: FakeSlack, instances: list[Server], pace: SlowReplies, *, number: int
) -> None:
    """A deploy's mentions, each in its own channel, spread over `instances`; returns once
    the reply job of each is running (its model call held)."""
    tags = [f"d{number}m{i}" for i in range(MENTIONS_PER_DEPLOY)]
    for i, tag in enumerate(tags):
        channel = f"CDEPLOY{number}X{i}"
        slack.add_channel(channel, f"deploy-{number}-{i}")
        await instances[i % len(instances)].message(f"<@UBOT> question {tag}", channel=channel)
    for _ in range(600):
        if pace.started(tags):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("\n".join(instance.output() for instance in instances))


@pytest.mark.parametrize("stalled", ["2", "30"], ids=["stalled-2s", "stalled-default-30s"])
async def test_rolling_deploys_under_slow_replies_post_each_reply_exactly_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel, stalled: str
) -> None:
    """Each deploy: mentions whose replies run on the old instances; two new instances start;
    the old ones get SIGTERM, half the replies ending within the grace (past a short
    JOB_STALLED_SECONDS), half not (handed back). The next deploy begins as soon as
    its mentions' replies run."""
    model.responder = lambda request: "answer" if purpose_of(request) == "reply" else None
    pace = SlowReplies()
    model.hold(pace)
    settings = {"JOB_STALLED_SECONDS": stalled, "JOB_WORKER": "process"}
    deploys = DEPLOYS
    old = await fleet(server, 2, **settings)
    every = list(old)
    stopped: list[bool] = []
    await mention(slack, old, pace, number=0)
    for number in range(deploys):
        new = await fleet(server, 2, **settings)
        every += new
        await worker_ready(new)  # as a platform's readiness check would have it
        for i in range(MENTIONS_PER_DEPLOY // 2):
            pace.release(f"d{number}m{i}", after=GRACE_SECONDS / 2)
        stopped += await asyncio.gather(*(instance.stop(timeout=40) for instance in old))
        # The next deploy's mentions once the old ones have stopped: a reply job that a
        # stopping instance took would be cut off and handed back, wherever it belonged.
        if number + 1 < deploys:
            await mention(slack, new, pace, number=number + 1)
        old = new
    mentions = deploys * MENTIONS_PER_DEPLOY
    try:
        await slack.wait_for_posts(mentions, timeout=60)
    except AssertionError:
        pass  # counted below: the lost ones
    await asyncio.sleep(3.0)  # nothing more comes
    posts = Counter(post["channel"] for post in slack.posts())
    channels = [f"CDEPLOY{d}X{i}" for d in range(deploys) for i in range(MENTIONS_PER_DEPLOY)]
    doubled = {channel: posts[channel] for channel in channels if posts[channel] > 1}
    lost = [channel for channel in channels if posts[channel] == 0]
    # A reply ending within the grace was asked of the model once: no other instance ran its
    # job while it ran (one that did wrote a second reply, posted or not).
    within = [f"d{d}m{i}" for d in range(deploys) for i in range(MENTIONS_PER_DEPLOY // 2)]
    run_again = {tag: pace.asked(tag) for tag in within if pace.asked(tag) != 1}
    print(f"JOB_STALLED_SECONDS={stalled}: {len(doubled)} doubled {doubled}, {len(lost)} lost,")
    print(f"  replies within the grace asked again: {run_again}")
    for tag in run_again:
        for number, request in enumerate(model.requests):
            if f"question {tag}" in json.dumps(request):
                print(f"  {tag}: request {number}: {json.dumps(request['messages'])[-400:]}")
    logs = "\n".join(instance.output() for instance in every)
    assert (doubled, lost, run_again) == ({}, [], {}), logs
    assert all(stopped), logs  # every old instance stopped cleanly, within its grace
    for instance in old:
        assert await instance.stop(), instance.output()


async def worker_ready(instances: list[Server]) -> None:
    """Each instance's job worker process is up and takes jobs."""
    for _ in range(1200):
        if all(instance.logged("job worker ready") for instance in instances):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("\n".join(instance.output() for instance in instances))


async def test_a_reply_cut_off_at_the_grace_end_is_handed_back_with_its_claim_owed(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel, database_url: str
) -> None:
    """At the end of its grace a stopping instance hands its running reply jobs back to the
    queue. By then each job's claim must be owed again (`interrupted`), or the instance that
    runs the job next finds it still `claimed` ("already answered") and the reply is lost."""
    model.responder = lambda request: "answer" if purpose_of(request) == "reply" else None
    pace = SlowReplies()  # nothing released: every reply is still running at the grace end
    model.hold(pace)
    (instance,) = await fleet(server, 1, JOB_STALLED_SECONDS="30", JOB_WORKER="process")
    await mention(slack, [instance], pace, number=0)
    assert await instance.stop(timeout=40), instance.output()
    engine = create_engine(database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            jobs = connection.execute(text(REPLY_JOBS)).scalars()
            replies = connection.execute(text("SELECT status FROM reply")).scalars()
            assert (sorted(jobs), sorted(replies)) == (
                ["todo"] * MENTIONS_PER_DEPLOY,
                ["interrupted"] * MENTIONS_PER_DEPLOY,
            )
    finally:
        engine.dispose()
    assert slack.posts() == []
