"""`/tomo tools` and the per-channel switches (docs/tools.md#tomo-tools), and /healthz's `mcp`:
the list shows tomo's own tools and each MCP server's; a server or one tool switched off in a
channel is neither offered nor callable there, and still is elsewhere; on again, it is back.
Japanese command words work; /healthz shows each server ok or unreachable."""

from __future__ import annotations

import pytest

from tests.conftest import StartTomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command
from tests.tools.mcp.helpers import looked_at, mention, offered_names, settings, tool_results

pytestmark = pytest.mark.usefixtures("tracker")


async def test_tools_lists_what_tomo_may_use_here(
    start_tomo: StartTomo, tracker: FakeMcp, hooks: FakeResponseUrl
) -> None:
    async with start_tomo(**settings(tracker.url)) as tomo:
        await looked_at(tomo)
        answer = await run_command(tomo, "tools", response_url=hooks.new_url())
        japanese = await run_command(tomo, "ツール", response_url=hooks.new_url())
    text = answer["text"]
    assert "`search_messages`" in text and "*tracker*" in text
    assert "`tracker__get_issue`" in text
    assert "`tracker__create_issue`: each call needs the asker's approval" in text
    assert "delete_project" not in text and "admin_export" not in text
    assert "このチャンネルで使えるツール" in japanese["text"]


async def test_a_server_or_a_tool_switched_off_here_is_not_offered_here_only(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    model.enqueue(
        asks_for(tool_call("tracker__get_issue", {"key": "PROJ-1"})), "Off here.", "Elsewhere."
    )
    async with start_tomo(**settings(tracker.url)) as tomo:
        await looked_at(tomo)
        off = await run_command(tomo, "tools off tracker__get_issue", response_url=hooks.new_url())
        assert "is switched off in this channel" in off["text"]
        await mention(tomo, slack, "<@UBOT> PROJ-1?")
        await mention(tomo, slack, "<@UBOT> and here?", channel="C2", replies=2)
        listed = await run_command(tomo, "tools", response_url=hooks.new_url())
        assert "`tracker__get_issue` (*off here*)" in listed["text"]
        server_off = await run_command(tomo, "ツール オフ tracker", response_url=hooks.new_url())
        assert "オフにしました" in server_off["text"]
        model.enqueue("No tracker here.")
        await mention(tomo, slack, "<@UBOT> anything?", replies=3)
        tool_on = await run_command(
            tomo, "tools on tracker__get_issue", response_url=hooks.new_url()
        )
        assert "first" in tool_on["text"]  # its server is still off here
        await run_command(tomo, "tools on tracker", response_url=hooks.new_url())
        model.enqueue("Back.")
        await mention(tomo, slack, "<@UBOT> back?", replies=4)
        unknown = await run_command(
            tomo, "tools off tracker__delete_project", response_url=hooks.new_url()
        )
    here, elsewhere, server_off_here, back = (
        offered_names(r) for r in model.requests[::1][:1] + model.requests[2:5]
    )
    assert "tracker__get_issue" not in here and "tracker__search_issues" in here
    assert "tracker__get_issue" in elsewhere
    assert not [n for n in server_off_here if n.startswith("tracker__")]
    assert "tracker__get_issue" in back
    # A call by its name where it is off is refused: nothing reaches the server.
    (result,) = tool_results(model.requests[1])
    assert result == "error: tracker__get_issue is switched off in this channel (/tomo tools)"
    assert tracker.calls() == []
    assert "I know no tool or MCP server called `tracker__delete_project`" in unknown["text"]


async def test_healthz_shows_each_server(start_tomo: StartTomo, tracker: FakeMcp) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/mcp"
    overrides = settings(tracker.url)
    from tests.tools.mcp.helpers import servers_json

    overrides["MCP_SERVERS"] = servers_json(
        tracker.url, others=[{"name": "wiki", "url": closed, "tools": ["search"]}]
    )
    async with start_tomo(**overrides) as tomo:
        await looked_at(tomo)
        health = (await tomo.client.get("/healthz")).json()
        assert health["mcp"] == {"tracker": "ok", "wiki": "unreachable"}
        assert health["status"] == "ok"
        tracker.fail(503)

        async def tracker_down() -> bool:
            body = (await tomo.client.get("/healthz")).json()
            return body["mcp"]["tracker"] == "unreachable"

        await wait_for(tracker_down, what="/healthz to see the tracker down")
        tracker.heal()
    async with start_tomo() as tomo:  # no MCP_SERVERS: no `mcp` at all
        assert "mcp" not in (await tomo.client.get("/healthz")).json()
