"""A reply killed in the middle of its tool calls (docs/how-tomo-works.md#tools): tomo killed
with SIGKILL while the model writes the round after a tool ran, then started again, runs the
reply again from the start (its tool too) and answers once, posted whole or streamed, with
either backend. Real `uvicorn app.main:app` processes (tests/processes.py); the tool is the
double of tests/tool_doubles.py, put in the registry by a sitecustomize module on the
processes' path (the server and its job worker both load it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app.db.engine import create_engine
from tests.conftest import TEST_DATABASE_URL, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WORKER_WAIT_SECONDS
from tests.fakes.model_tools import asks_for, tool_call
from tests.processes import PROJECT_ROOT, Server, server
from tests.test_restart_streaming import BACKENDS, claim_statuses

__all__ = ["server"]  # the fixture

REGISTER = (
    "from app.tools import registry\n"
    'registry.CLASSES["search_messages"] = "tests.tool_doubles:Lookup"\n'
)
ANSWER = "The launch is on Friday."


def after_a_tool(request: dict[str, Any]) -> bool:
    return any(m.get("role") == "tool" for m in request.get("messages") or [])


def first_round(request: dict[str, Any]) -> bool:
    """A reply's first round: tools offered, none run yet. (Other model requests may come: a
    worker that starts within ten minutes of a periodic job's tick runs it, Procrastinate's
    catch-up of a missed tick, so the hourly memory run asks the model near every full hour.)"""
    return bool(request.get("tools")) and not after_a_tool(request)


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("backend", BACKENDS)
async def test_killed_mid_loop_the_restart_runs_the_reply_again_and_answers_once(
    server: Callable[..., Server],
    slack: FakeSlack,
    model: FakeModel,
    database_url: str,
    tmp_path: Path,
    backend: str,
    streamed: bool,
) -> None:
    if backend == "procrastinate" and not TEST_DATABASE_URL:
        pytest.skip("Procrastinate is PostgreSQL's")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(REGISTER)

    def responder(request: dict[str, Any]) -> str | dict[str, Any]:
        if after_a_tool(request):
            return ANSWER
        return asks_for(tool_call("search_messages", {"query": "launch"}))

    model.responder = responder
    holding = True  # the round after the tool waits (until the process is killed)
    model.hold(lambda n, request: 1.0 if holding and after_a_tool(request) else 0.0)
    tomo = server(
        PYTHONPATH=f"{site}:{PROJECT_ROOT}",
        TOOLS="search_messages",
        LLM_FUNCTION_CALLING="true",
        STREAM_REPLIES="auto" if streamed else "false",
        LLM_TIMEOUT_SECONDS="30",
        **BACKENDS[backend],
    )
    await tomo.start()
    ts = next_ts()
    slack.add_message("C1", ts=ts, text="<@UBOT> when is the launch?", user="U1")
    await tomo.message("<@UBOT> when is the launch?", ts=ts)
    await wait_for(
        lambda: model.requests_for(after_a_tool),
        timeout=WORKER_WAIT_SECONDS,
        what="the round after the tool",
    )
    if streamed:  # the tool's task started the reply's message
        assert [s["state"] for s in slack.streams()] == ["in_progress"]
    await tomo.kill()  # kill -9 in the middle of the loop
    assert slack.posts() == []
    holding = False

    await tomo.start()
    engine = create_engine(database_url)
    try:
        await wait_for(
            lambda: claim_statuses(engine), timeout=WORKER_WAIT_SECONDS, what="the claim"
        )
        assert await claim_statuses(engine) == ["posted"]
        async with engine.connect() as connection:
            claim_id = (await connection.execute(text("SELECT id FROM reply"))).scalar_one()
            recorded = (
                (
                    await connection.execute(
                        text("SELECT reply_id FROM llm_call WHERE success AND purpose = 'reply'")
                    )
                )
                .scalars()
                .all()
            )
    finally:
        await engine.dispose()
    assert await tomo.stop(), tomo.output()
    # Run again from the start: the first round and the tool twice, one answer.
    first_rounds = model.requests_for(first_round)
    story = f"{len(model.requests)} model requests; both lives' log:\n{tomo.output(20000)}"
    assert len(first_rounds) == 2 and len(model.requests_for(after_a_tool)) >= 2, story
    assert recorded and set(recorded) == {claim_id}, story
    messages = slack.bot_messages("C1")
    assert len(messages) == 1, story
    (message,) = messages
    assert message["text"] == ANSWER and message.get("thread_ts") == ts
    if streamed:
        (stream,) = slack.streams()
        assert stream["ts"] == message["ts"] and stream["state"] != "in_progress"
        assert len(slack.calls_to("chat.startStream")) == 1 and slack.posts() == []
    else:
        assert len(slack.posts()) == 1 and slack.streams() == []
