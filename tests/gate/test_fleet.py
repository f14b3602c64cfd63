"""The gate's guarantees across instances (docs/how-tomo-works.md#several-instances): two real
`uvicorn app.main:app` processes with JOB_BACKEND=procrastinate on one PostgreSQL database. What
one instance is told (a channel made private, a `/tomo forget`) holds for a reply another
instance's job writes: the facts are in the database, not in a process. The instance told is
stopped before the question, so the other one's job answers it (its log says so)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.conftest import TEST_DATABASE_URL, later_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.gate.endpoint import link, script, tool_results
from tests.gate.test_scope_now import MADE_PRIVATE
from tests.jobs.test_fleet import fleet
from tests.processes import Server, server
from tests.slash import command_form, signed

__all__ = ["server"]  # the fixture

pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")

WORDS = [pytest.param("moonbeamplan", id="English"), pytest.param("新製品計画", id="Japanese")]
# Replies with tools; no judgment comes due while a test runs.
TOOLS = {"LLM_FUNCTION_CALLING": "true", "MIN_WAIT_SECONDS": "600"}


async def asked(
    instance: Server,
    slack: FakeSlack,
    model: FakeModel,
    calls: list[tuple[str, dict[str, Any]]],
    *,
    posts: int,
) -> list[str]:
    """A mention in #general delivered to `instance`, whose model makes these calls, answered
    (the `posts`-th post of the test): what the calls gave back."""
    after = len(model.requests)
    script(model, calls)
    ts, text = later_ts(), "<@UBOT> can you look it up?"
    slack.add_message("C1", ts=ts, text=text, user="U1")
    await instance.message(text, kind="app_mention", ts=ts)
    await slack.wait_for_posts(posts, timeout=60)
    return tool_results(model, after=after)


@pytest.mark.parametrize("word", WORDS)
async def test_a_channel_made_private_on_one_instance_is_private_to_a_search_on_another(
    server: Callable[..., Server], slack: FakeSlack, model: FakeModel, word: str
) -> None:
    slack.add_channel("C3", "plans", members=("U1", "UBOT"))
    a, b = await fleet(server, 2, **TOOLS)
    said = later_ts()
    slack.add_message("C3", ts=said, text=f"the {word} ships in May", user="U1")
    await a.message(f"the {word} ships in May", channel="C3", ts=said)
    search = [("search_messages", {"query": word})]
    public = await asked(b, slack, model, search, posts=1)
    # docs.slack.dev/reference/events/message/channel_convert_to_private, delivered to a.
    slack.add_channel("C3", "plans", is_private=True, members=("U1", "UBOT"))
    await a.message(
        MADE_PRIVATE,
        channel="C3",
        subtype="channel_convert_to_private",
        channel_type="group",
        ts=later_ts(),
    )
    assert await a.stop(), a.output()
    private = await asked(b, slack, model, search, posts=2)
    await wait_for(lambda: b.logged("replied with 1 message(s)"), what="b's reply")
    assert await b.stop(), b.output()
    assert word in public[0], public
    assert private == ["No messages found."]


@pytest.mark.parametrize("word", WORDS)
async def test_a_forget_on_one_instance_holds_for_a_thread_read_on_another(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    hooks: FakeResponseUrl,
    word: str,
) -> None:
    """An old thread of #general, stored as its events came to a; `/tomo forget` on a; then
    someone answers in the thread (Slack has all of it) and links it, asking b."""
    a, b = await fleet(server, 2, **TOOLS)
    parent, reply = f"{int(time.time()) - 3600}.000100", f"{int(time.time()) - 3500}.000200"
    slack.add_message("C1", ts=parent, text=f"the {word} plan is on Friday", user="U1")
    slack.add_message("C1", ts=reply, text=f"{word}: budget 300", user="U2", thread_ts=parent)
    await a.message(f"the {word} plan is on Friday", ts=parent)
    await a.message(f"{word}: budget 300", ts=reply, thread_ts=parent, user="U2")
    body = urlencode(command_form("forget", response_url=hooks.new_url())).encode()
    async with a.client() as client:
        forgot = await client.post("/slack/commands", content=body, headers=signed(body))
    assert forgot.status_code == 200, forgot.text
    assert await a.stop(), a.output()
    slack.add_message("C1", ts=later_ts(), text="after the forget", user="U2", thread_ts=parent)
    calls = [
        ("read_thread", {"permalink": link("C1", parent)}),
        ("read_thread", {"permalink": link("C1", reply, thread_ts=parent)}),
        ("search_messages", {"query": word}),
    ]
    results = await asked(b, slack, model, calls, posts=1)
    await wait_for(lambda: b.logged("replied with 1 message(s)"), what="b's reply")
    assert await b.stop(), b.output()
    assert "2" in forgot.json()["text"], forgot.text  # the two messages it had, deleted
    assert word not in "\n".join(results), results
    for thread in results[:2]:
        assert "after the forget" in thread and ", 1 messages, " in thread, thread
    assert results[2] == "No messages found."
