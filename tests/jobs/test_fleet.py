"""Several instances, one tomo (docs/how-tomo-works.md#several-instances): real `uvicorn
app.main:app` processes with JOB_BACKEND=procrastinate on one PostgreSQL database, events spread
over them as a load balancer would, instances killed (SIGKILL) and replaced (SIGTERM)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from tests.conftest import TEST_DATABASE_URL, StartTomo, judgment_json, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.fakes.response_url import FakeResponseUrl
from tests.processes import BEARER, Server, server
from tests.slash import run_command
from tests.test_restart import answer_by_purpose

__all__ = ["server"]  # the fixture

pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")

FLEET = {
    "JOB_BACKEND": "procrastinate",
    "JOB_WORKER": "inline",  # each instance one process: a SIGKILL takes its jobs with it
    "MIN_WAIT_SECONDS": "1.0",
}
# How soon the fleet takes a silent instance for dead, in the tests of instances that die or
# stop. The others keep the default (30 s): an instance starved of the CPU for 3 s, as on a
# busy 2-core machine while it imports LiteLLM for its first job, looks dead too, and its
# running judgment was run again by another (a judgment asked of the model twice).
STALLED = {"JOB_STALLED_SECONDS": "3"}


def purposes(model: FakeModel) -> list[str]:
    """The judgments and replies the model was asked for (a periodic memory run may come
    too: on a fresh database the fleet's first tick is due at once)."""
    asked = (purpose_of(request) for request in model.requests)
    return [purpose for purpose in asked if purpose in ("judgment", "reply")]


async def fleet(server: Callable[..., Server], size: int, **overrides: str) -> list[Server]:
    instances = [server(**(FLEET | overrides)) for _ in range(size)]
    await asyncio.gather(*(instance.start(timeout=WORKER_WAIT_SECONDS) for instance in instances))
    return instances


async def test_in_one_process_a_mention_is_answered_and_a_burst_judged_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False))
    async with start_tomo(JOB_BACKEND="procrastinate", MIN_WAIT_SECONDS=0.5) as tomo:
        health = (await tomo.client.get("/healthz")).json()
        assert health["backend"] == "procrastinate" and health["scheduler"] == "running"
        await tomo.message("<@UBOT> hi there", channel="C2")
        await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
        for said in ("lunch?", "anyone", "ramen maybe"):
            await tomo.message(said)
        assert [t.id for t in await tomo.timers("judgment")] == ["judgment:C1:"]
        # /tomo status and the admin page read the timers from the database too.
        status = await run_command(tomo, "status", response_url=hooks.new_url())
        assert "Pending timers: judgment (the top level)" in status["text"]
        timers = (await tomo.client.get("/admin/timers", headers=BEARER)).json()["timers"]
        assert [(t["id"], t["latest_text"]) for t in timers] == [("judgment:C1:", "ramen maybe")]
        await wait_for(lambda: purposes(model).count("judgment") == 1, timeout=WORKER_WAIT_SECONDS)
        await asyncio.sleep(1.0)
    assert purposes(model) == ["reply", "judgment"]
    assert len(slack.posts()) == 1


async def test_a_burst_spread_over_three_instances_is_judged_once_and_answered_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="sounds good")
    # Quiet time that outlasts the burst and the listings below, however busy the machine: a
    # second (FLEET's) was not, and the judgment ran before the listings, or mid-burst.
    a, b, c = await fleet(server, 3, MIN_WAIT_SECONDS="15")
    for instance, said in zip(
        (a, b, c, a, b), ("lunch?", "yes", "where", "ramen", "ok"), strict=True
    ):
        await instance.message(said)
    # Any instance lists the fleet's one pending judgment.
    for instance in (a, b, c):
        assert [j["id"] for j in await instance.jobs() if j["kind"] == "judgment"] == [
            "judgment:C1:"
        ]
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(2.0)  # nothing more comes
    assert purposes(model) == ["judgment", "reply"]
    assert len(slack.posts()) == 1
    for instance in (a, b, c):
        assert (await instance.health())["backend"] == "procrastinate"
        assert await instance.stop(), instance.output()


async def test_a_mention_delivered_twice_to_different_instances_and_retried_is_answered_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False), reply="hello!")
    a, b, c = await fleet(server, 3)
    ts = await a.message("<@UBOT> are you there?", kind="app_mention", event_id="EvMention1")
    await b.message("<@UBOT> are you there?", ts=ts, event_id="EvMessage1")
    await c.message("<@UBOT> are you there?", ts=ts, event_id="EvMention1", retry=1)
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(2.0)
    assert purposes(model) == ["reply"] and len(slack.posts()) == 1
    for instance in (a, b, c):
        await instance.kill()


async def test_a_new_message_on_another_instance_cancels_the_pending_reply_and_delete_works(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    answers = iter([judgment_json(True, delay=4), judgment_json(False)])

    def responder(request: dict[str, object]) -> str:
        return next(answers) if purpose_of(request) == "judgment" else "late reply"

    model.responder = responder
    a, b = await fleet(server, 2)
    await a.message("is the build broken?")

    async def reply_pending() -> bool:
        return [j["id"] for j in await b.jobs() if j["kind"] == "reply"] == ["reply:C1:"]

    await wait_for(reply_pending, timeout=WORKER_WAIT_SECONDS, what="the reply timer, seen from b")
    await b.message("never mind, fixed it", user="U2")
    assert [j["id"] for j in await a.jobs() if j["kind"] == "reply"] == []
    await wait_for(lambda: purposes(model) == ["judgment", "judgment"], timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(5)  # past the cancelled reply's time
    assert slack.posts() == []
    # DELETE on one instance cancels a job another instance set.
    await a.message("one more thing")
    assert await b.cancel("judgment:C1:") == 200
    assert [j["id"] for j in await a.jobs() if j["kind"] == "judgment"] == []
    assert await a.cancel("judgment:C1:") == 404
    for instance in (a, b):
        await instance.kill()


async def test_an_instance_killed_mid_reply_loses_nothing_and_posts_once(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    """Both instances are up before the mention, so neither start-up's recovery sees it: the
    reply is run again because its instance stopped sending heartbeats."""
    answer_by_purpose(model, judgment=judgment_json(False), reply="here I am")
    instances = await fleet(server, 2, **STALLED)
    model.delay(30)  # the reply is still being written when its instance dies
    await instances[1].message("<@UBOT> still there?", channel="C2")
    await model.wait_for_requests(1, timeout=WORKER_WAIT_SECONDS)
    # The instance running the reply job put its "on it" sign up.
    (doomed,) = [i for i in instances if "on it:" in i.output()]
    (survivor,) = [i for i in instances if i is not doomed]
    model.delay(0)
    killed = time.monotonic()
    await doomed.kill()  # SIGKILL: no shutdown, no goodbye
    await slack.wait_for_posts(1, timeout=WORKER_WAIT_SECONDS)
    taken = time.monotonic() - killed
    await asyncio.sleep(2.0)
    assert len(slack.posts()) == 1 and slack.posts()[0]["text"] == "here I am"
    assert purposes(model) == ["reply", "reply"]
    assert taken < 60
    assert await survivor.stop(), survivor.output()


async def test_a_rolling_restart_loses_and_doubles_nothing(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel
) -> None:
    """Old instances get SIGTERM while new ones start, with judgments pending and a reply being
    written: each conversation is answered exactly once. The instances run their jobs in job
    worker processes, as deployed by default."""
    answer_by_purpose(model, judgment=judgment_json(True, delay=0), reply="answer")
    old = await fleet(server, 2, JOB_WORKER="process", **STALLED)
    await old[0].message("who has the slides?", channel="C1")
    await old[1].message("what's for lunch?", channel="C2")
    model.delay(3)
    await old[0].message("<@UBOT> quick question", channel="C3")
    await model.wait_for_requests(1, timeout=WORKER_WAIT_SECONDS)
    new = await fleet(server, 2, JOB_WORKER="process", **STALLED)
    stopped = await asyncio.gather(*(instance.stop() for instance in old))
    assert all(stopped), [instance.output() for instance in old]
    model.delay(0)
    await slack.wait_for_posts(3, timeout=WORKER_WAIT_SECONDS)
    await asyncio.sleep(3.0)
    channels = sorted(post["channel"] for post in slack.posts())
    assert channels == ["C1", "C2", "C3"]
    for instance in new:
        assert await instance.stop(), instance.output()
