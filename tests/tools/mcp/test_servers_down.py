"""A server that is down, slow or failing (docs/tools.md#mcp): a call gives a result that says so
and the reply goes on; its tools drop out of the offer until it answers a listing again (tried
every CHECK_SECONDS, lowered here); a server down from the start leaves the others offered."""

from __future__ import annotations

import socket

import pytest

from app.tools.mcp import servers as mcp_servers
from tests.conftest import StartTomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.tools.mcp.helpers import (
    looked_at,
    mention,
    offered_names,
    servers_json,
    settings,
    tool_results,
)

pytestmark = pytest.mark.usefixtures("tracker")


def tracker_tools(request: dict[str, object]) -> list[str]:
    return [n for n in offered_names(request) if n.startswith("tracker__")]  # type: ignore[arg-type]


async def test_a_failing_server_says_so_drops_out_and_comes_back_when_it_answers(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Looked at once at start, then only when this test says (servers.check).
    monkeypatch.setattr(mcp_servers, "CHECK_SECONDS", 3600.0)
    model.enqueue(asks_for(tool_call("tracker__get_issue", {"key": "PROJ-1"})), "It is down.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        servers = await looked_at(tomo)
        tracker.fail(503)
        await mention(tomo, slack, "<@UBOT> PROJ-1?")
        (result,) = tool_results(model.requests[1])
        assert result.startswith("error: the tracker server did not answer")
        assert "left out until it answers again" in result
        assert slack.posts()[-1]["text"] == "It is down."
        assert tracker_tools(model.requests[0])
        assert servers.states == {"tracker": "unreachable"}
        model.enqueue("meanwhile")
        await mention(tomo, slack, "<@UBOT> and now?", replies=2)
        assert not tracker_tools(model.requests[2])
        await servers.check("tracker")
        assert servers.states == {"tracker": "unreachable"}
        tracker.heal()
        await servers.check("tracker")
        assert servers.states == {"tracker": "ok"}
        model.enqueue("back")
        await mention(tomo, slack, "<@UBOT> and now?", replies=3)
        assert tracker_tools(model.requests[3]) == tracker_tools(model.requests[0])


async def test_a_server_is_looked_at_again_every_check_seconds(
    start_tomo: StartTomo, tracker: FakeMcp
) -> None:
    async with start_tomo(**settings(tracker.url)) as tomo:
        servers = await looked_at(tomo)
        tracker.fail(500)
        await wait_for(lambda: servers.states == {"tracker": "unreachable"}, what="it found down")
        tracker.heal()
        await wait_for(lambda: servers.states == {"tracker": "ok"}, what="it found back")


async def test_a_slow_server_is_given_up_on_after_its_seconds(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp
) -> None:
    model.enqueue(asks_for(tool_call("tracker__search_issues", {"query": "login"})), "Slow.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        await looked_at(tomo)
        tracker.slow(4.0)  # CALL_SECONDS is 2 here
        await mention(tomo, slack, "<@UBOT> login issues?")
        tracker.heal()
    (result,) = tool_results(model.requests[1])
    assert "did not answer (no answer within 2 s)" in result


async def test_a_server_down_from_the_start_leaves_the_others_offered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp
) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/mcp"
    down = {"name": "wiki", "url": closed, "tools": ["search"], "approve": []}
    model.enqueue("ok")
    overrides = settings(tracker.url)
    overrides["MCP_SERVERS"] = servers_json(tracker.url, others=[down])
    async with start_tomo(**overrides) as tomo:
        servers = await looked_at(tomo)
        assert servers.states == {"tracker": "ok", "wiki": "unreachable"}
        await mention(tomo, slack, "<@UBOT> hello")
    names = offered_names(model.requests[0])
    assert "tracker__get_issue" in names and not [n for n in names if n.startswith("wiki__")]
