"""Approvals with real `uvicorn app.main:app` processes (docs/tools.md#approvals): on a
two-instance Procrastinate fleet, a call asked on one instance and approved on the other (a
double click reaching both) is made once and answered once; an instance killed (SIGKILL) while
it makes the approved call never makes it again, and the conversation goes on telling the
model it may or may not have been made; one instance killed and started again keeps its
pending decisions (a click after the restart makes the call, a wait that ended meanwhile
declines it) and cuts short the call it was making. The MCP server is the SDK-built stand-in
in this process; its calls are what it recorded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import TEST_DATABASE_URL, judgment_json, purpose_of, wait_for
from tests.digest.helpers import database_rows
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.fakes.response_url import FakeResponseUrl
from tests.interactions import form, signed
from tests.processes import Server, server
from tests.tools.mcp.approving import approval_id_of, card_updates, click_payload
from tests.tools.mcp.helpers import TOKEN, servers_json, tool_results

__all__ = ["server"]  # the fixture

FLEET = {"JOB_BACKEND": "procrastinate", "JOB_WORKER": "inline", "JOB_STALLED_SECONDS": "3"}
ARGUMENTS = {"title": "Login fails", "body": "since Monday"}
# What the model writes, by what its last tool result says.
SAID = {
    "The call was not made": "I asked to file it.",
    "approved the call on its card": "Filed: PROJ-7.",
    "may or may not have been done": "It may or may not be filed; please check.",
    "did not decide": "It was not filed.",
}
FILED, UNSURE, NOT_FILED = SAID["approved the call on its card"], *list(SAID.values())[2:]
on_the_fleet = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")


def answer(request: dict[str, Any]) -> str | dict[str, Any] | None:
    purpose = purpose_of(request)
    if purpose == "judgment":
        return judgment_json(False)
    if purpose != "reply":
        return None
    results = tool_results(request)
    if not results:
        return asks_for(tool_call("tracker__create_issue", ARGUMENTS))
    return next((said for key, said in SAID.items() if key in results[-1]), "?")


def mcp(tracker: FakeMcp) -> dict[str, str]:
    return {
        "MCP_SERVERS": servers_json(tracker.url),
        "TRACKER_TOKEN": TOKEN,
        "LLM_FUNCTION_CALLING": "true",
    }


async def started(*instances: Server) -> None:
    await asyncio.gather(*(i.start(timeout=WORKER_WAIT_SECONDS) for i in instances))

    async def answers() -> bool:
        healths = await asyncio.gather(*(i.health() for i in instances))
        return all(h.get("mcp") == {"tracker": "ok"} for h in healths)

    await wait_for(answers, timeout=WORKER_WAIT_SECONDS, what="the tracker listed")


async def asked(instance: Server, slack: FakeSlack, channel: str) -> dict[str, Any]:
    """A mention in `channel` whose reply asks for create_issue: the approval card."""
    await instance.message("<@UBOT> file an issue: login", channel=channel, kind="app_mention")

    def card() -> dict[str, Any] | None:
        for post in slack.posts():
            blocks = slack.blocks_of(post["channel"], post["ts"]) or []
            if post["channel"] == channel and any(b.get("type") == "actions" for b in blocks):
                return post | {"blocks": blocks}
        return None

    await wait_for(card, timeout=WORKER_WAIT_SECONDS, what=f"the card in {channel}")
    found = card()
    assert found is not None
    await wait_for(
        lambda: said(slack, SAID["The call was not made"], channel),
        timeout=WORKER_WAIT_SECONDS,
        what=f"the reply that asked, in {channel}",
    )
    return found


def said(slack: FakeSlack, text: str, channel: str | None = None) -> list[dict[str, Any]]:
    """The posts that begin with `text` (the reply that asked ends with the waiting line)."""
    return [
        p
        for p in slack.posts()
        if str(p["text"]).startswith(text) and channel in (None, p["channel"])
    ]


async def click(
    instance: Server, card: dict[str, Any], *, hooks: FakeResponseUrl, approve: bool = True
) -> None:
    payload = click_payload(card, approve=approve, response_url=hooks.new_url(kind="actions"))
    body = form(payload)
    async with instance.client() as client:
        response = await client.post("/slack/interactions", content=body, headers=signed(body))
    assert response.status_code == 200, response.text


async def approval_jobs(instance: Server) -> list[str]:
    return [job["id"] for job in await instance.jobs() if job["kind"] == "approval"]


@on_the_fleet
async def test_asked_on_one_instance_clicked_on_both_the_call_is_made_once_and_answered_once(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    tracker: FakeMcp,
) -> None:
    model.responder = answer
    a, b = server(**FLEET, **mcp(tracker)), server(**FLEET, **mcp(tracker))
    await started(a, b)
    card = await asked(a, slack, "C1")
    assert said(slack, "I asked to file it.")[0]["text"].endswith("before I go on.")
    # Either instance lists the approval's timer (the end of the wait), set by the fleet.
    await wait_for(lambda: approval_jobs(b), timeout=WORKER_WAIT_SECONDS, what="the timer")
    for instance in (a, b):
        (job,) = await approval_jobs(instance)
        assert job.startswith("approval:C1:")
    await click(b, card, hooks=hooks)  # on the other instance
    await asyncio.gather(click(a, card, hooks=hooks), click(b, card, hooks=hooks))  # twice more
    await wait_for(lambda: said(slack, FILED), timeout=WORKER_WAIT_SECONDS, what="the reply")
    await wait_for(lambda: len(hooks.posts()) == 2, what="the later clicks told")
    await asyncio.sleep(2.0)  # nothing more comes
    assert tracker.calls("create_issue") == [{"tool": "create_issue", "arguments": ARGUMENTS}]
    assert len(said(slack, FILED)) == 1
    assert all("already been decided" in post["text"] for post in hooks.posts())
    assert "the call was made" in card_updates(slack, card)[-1]["text"]
    for instance in (a, b):
        assert await approval_jobs(instance) == []
        assert await instance.stop(), instance.output()


@on_the_fleet
async def test_the_instance_making_the_call_killed_it_is_never_made_again_and_a_reply_comes(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    tracker: FakeMcp,
) -> None:
    model.responder = answer
    a, b = server(**FLEET, **mcp(tracker)), server(**FLEET, **mcp(tracker))
    await started(a, b)
    card = await asked(a, slack, "C1")
    tracker.hold(120)  # the call reaches the server, which answers only after the kill
    await click(b, card, hooks=hooks)
    await wait_for(lambda: tracker.calls("create_issue"), timeout=WORKER_WAIT_SECONDS)
    making = f"approval {approval_id_of(card)}: making the call"
    (doomed,) = [i for i in (a, b) if i.logged(making)]
    await doomed.kill()  # SIGKILL while the call is on its way
    tracker.hold(0)
    await doomed.start(timeout=WORKER_WAIT_SECONDS)  # and started again
    await wait_for(lambda: said(slack, UNSURE), timeout=WORKER_WAIT_SECONDS, what="the reply")
    await asyncio.sleep(2.0)
    assert len(tracker.calls("create_issue")) == 1
    assert len(said(slack, UNSURE)) == 1 and said(slack, FILED) == []
    assert "it may or may not have been made" in card_updates(slack, card)[-1]["text"]
    for instance in (a, b):
        assert await instance.stop(), instance.output()


async def test_one_instance_killed_and_started_again_keeps_its_decisions_and_cuts_its_call_short(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    tracker: FakeMcp,
    database_url: str,
) -> None:
    """The default backend, the job worker a process: in C1 a click after the restart makes
    the call; in C2 the wait ends while tomo is down and is declined after the restart; in C3
    the approved call is on its way when tomo is killed, and is never made again."""
    model.responder = answer
    slack.add_channel("C3", "dev")
    tomo = server(**mcp(tracker))
    await started(tomo)
    cards = {channel: await asked(tomo, slack, channel) for channel in ("C1", "C2", "C3")}
    tracker.hold(120)
    await click(tomo, cards["C3"], hooks=hooks)
    await wait_for(lambda: tracker.calls("create_issue"), timeout=WORKER_WAIT_SECONDS)
    await tomo.kill()
    tracker.hold(0)
    database_rows(
        database_url,
        "UPDATE mcp_approval SET expires_at = :t WHERE channel = 'C2'",
        t=time.time() + 1,
    )
    await started(tomo)
    await click(tomo, cards["C1"], hooks=hooks)

    def answered() -> bool:
        return all(said(slack, text) for text in (FILED, NOT_FILED, UNSURE))

    await wait_for(answered, timeout=WORKER_WAIT_SECONDS, what="the three replies")
    await asyncio.sleep(2.0)
    assert await tomo.stop(), tomo.output()
    assert [(p["channel"], p["text"]) for p in said(slack, FILED)] == [("C1", FILED)]
    assert [(p["channel"], p["text"]) for p in said(slack, NOT_FILED)] == [("C2", NOT_FILED)]
    assert [(p["channel"], p["text"]) for p in said(slack, UNSURE)] == [("C3", UNSURE)]
    assert len(tracker.calls("create_issue")) == 2  # C3's, once, and C1's
    assert "No decision within" in card_updates(slack, cards["C2"])[-1]["text"]
    assert "may or may not have been made" in card_updates(slack, cards["C3"])[-1]["text"]
    states = database_rows(database_url, "SELECT state FROM mcp_approval")
    assert states == [{"state": "done"}] * 3
