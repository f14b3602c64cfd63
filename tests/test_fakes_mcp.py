"""The MCP stand-in (tests/fakes/mcp_server.py) against the official SDK's own client: it speaks
Streamable HTTP as the SDK does, lists its tools with their annotations, answers calls, and
fails when told to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.fakes.mcp_server import FakeMcp


@pytest.fixture(scope="module")
def server() -> Iterator[FakeMcp]:
    with FakeMcp() as fake:
        yield fake


async def _session(url: str, work: Any, headers: dict[str, str] | None = None) -> Any:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=10) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, read_timeout_seconds=10) as session,
    ):
        await session.initialize()
        return await work(session)


async def test_the_sdks_client_lists_its_tools_with_their_annotations(server: FakeMcp) -> None:
    server.reset()

    async def listing(session: ClientSession) -> Any:
        return await session.list_tools()

    listed = await _session(server.url, listing)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {
        "search_issues",
        "get_issue",
        "create_issue",
        "delete_project",
        "admin_export",
    }
    assert tools["search_issues"].annotations.read_only_hint is True
    assert tools["create_issue"].annotations.read_only_hint is False
    assert tools["delete_project"].annotations.destructive_hint is True
    assert tools["create_issue"].input_schema["required"] == ["title"]


async def test_the_sdks_client_calls_a_tool_and_the_call_is_recorded(server: FakeMcp) -> None:
    server.reset()
    server.answer("get_issue", "PROJ-1: 日本語のタイトル")

    async def calling(session: ClientSession) -> Any:
        return await session.call_tool("get_issue", {"key": "PROJ-1"})

    result = await _session(server.url, calling, headers={"Authorization": "Bearer t0ken"})
    assert not result.is_error and result.content[0].text == "PROJ-1: 日本語のタイトル"
    assert server.calls() == [{"tool": "get_issue", "arguments": {"key": "PROJ-1"}}]
    assert all(h.get("authorization") == "Bearer t0ken" for h in server.headers())
    # Streamable HTTP: every message is a POST to the one endpoint, accepting JSON and SSE.
    assert "text/event-stream" in server.headers()[0]["accept"]


async def test_a_failing_stand_in_fails_the_sdks_client(server: FakeMcp) -> None:
    server.reset()
    server.fail(503)

    async def listing(session: ClientSession) -> Any:
        return await session.list_tools()

    with pytest.raises(Exception):  # noqa: B017  (the SDK raises a group of what went wrong)
        await _session(server.url, listing)
    server.heal()
    assert (await _session(server.url, listing)).tools
