"""What the MCP tests share: a tracker stand-in per test session, MCP_SERVERS pointing at it (its
token from the environment as `${TRACKER_TOKEN}`), and the waits for tomo's first look at it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.tools.mcp import servers as mcp_servers
from app.tools.mcp.servers import McpServers
from tests.conftest import Tomo, next_ts, wait_for
from tests.fakes import FakeSlack
from tests.fakes.mcp_server import FakeMcp

TOKEN = "trk-s3cret-t0ken"
TOOLS = ["search_issues", "get_issue"]
APPROVE = ["create_issue"]


def servers_json(
    url: str,
    *,
    tools: Any = TOOLS,
    approve: Any = APPROVE,
    others: list[dict[str, Any]] | None = None,
) -> str:
    server = {
        "name": "tracker",
        "url": url,
        "headers": {"Authorization": "Bearer ${TRACKER_TOKEN}"},
        "tools": tools,
        "approve": approve,
    }
    return json.dumps([server, *(others or [])])


def settings(url: str, **server: Any) -> dict[str, Any]:
    return {
        "LLM_FUNCTION_CALLING": "true",
        "MIN_WAIT_SECONDS": 60,
        "MCP_SERVERS": servers_json(url, **server),
    }


@pytest.fixture(scope="session")
def session_tracker() -> Iterator[FakeMcp]:
    with FakeMcp() as fake:
        yield fake


@pytest.fixture
def tracker(session_tracker: FakeMcp, monkeypatch: pytest.MonkeyPatch) -> FakeMcp:
    session_tracker.reset()
    monkeypatch.setenv("TRACKER_TOKEN", TOKEN)
    # A server is looked at every 0.3 s and given 2 s to answer, not 60 s and 10 s.
    monkeypatch.setattr(mcp_servers, "CHECK_SECONDS", 0.3)
    monkeypatch.setattr(mcp_servers, "CALL_SECONDS", 2.0)
    return session_tracker


def servers_of(tomo: Tomo) -> McpServers:
    services = tomo.runtime.services
    assert services is not None and services.mcp is not None
    return services.mcp


async def looked_at(tomo: Tomo) -> McpServers:
    """tomo's servers, once it has tried each."""
    servers = servers_of(tomo)
    await wait_for(servers.checked.is_set, timeout=60, what="the MCP servers' first check")
    return servers


def offered_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def mention(
    tomo: Tomo, slack: FakeSlack, text: str, *, replies: int = 1, **extra: Any
) -> str:
    """A mention, answered: returns its ts once `replies` replies are settled in all."""
    ts = next_ts()
    channel = extra.pop("channel", "C1")
    slack.add_message(channel, ts=ts, text=text, user=extra.get("user", "U1"))
    await tomo.message(text, channel=channel, ts=ts, **extra)
    await wait_for(
        lambda: _settled(tomo, replies),
        timeout=60,
        what=f"{replies} settled reply(ies)",
    )
    return ts


async def _settled(tomo: Tomo, n: int) -> bool:
    rows = await tomo.rows("SELECT 1 FROM reply WHERE status IN ('posted', 'failed')")
    return len(rows) >= n
