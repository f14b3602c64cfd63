"""The one place tomo speaks MCP: the official MCP Python SDK's Streamable HTTP client
(`streamable_http_client` under a `ClientSession`), with LiteLLM's MCP helpers where they fit
(listing every page of a server's tools; a tool's input schema as OpenAI's function calling
takes it). Never a protocol of our own.

Each operation opens its own MCP session (initialize, the one request, close): a few
milliseconds more than a session kept open, and nothing to keep alive, reconnect or leak
between replies; the HTTP client under it (its connections, its TLS context) is the server's
own, made once (`http_client`) and closed with the servers. Each operation is bounded by
`seconds` as a whole. What goes wrong is one of our two errors: the server
is unreachable (down, slow, an error status, a broken answer), or it answered the request with
an error of its own. Imported only where MCP_SERVERS is set, on a thread (app.tools.mcp.servers).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
from litellm.mcp_client.tools import list_tools_with_pagination, transform_mcp_tool_to_openai_tool
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, TextContent

from app.settings.mcp import McpServer
from app.tools.mcp.answers import Answer, ListedTool, McpRefused, McpUnreachable

CLIENT = Implementation(name="tomo", version="1")
# JSON-RPC errors that say the request was wrong, not the server (invalid params, no method).
REQUEST_ERRORS = frozenset({-32602, -32601})


def http_client(server: McpServer, *, seconds: float) -> httpx2.AsyncClient:
    """The server's HTTP client: its headers on every request, `seconds` for each step."""
    return httpx2.AsyncClient(headers=server.header_values(), timeout=httpx2.Timeout(seconds))


async def list_tools(
    server: McpServer, *, http: httpx2.AsyncClient, seconds: float
) -> list[ListedTool]:
    async def listing(session: ClientSession) -> list[ListedTool]:
        tools = await list_tools_with_pagination(session, seconds, require_complete=True)
        listed = []
        for tool in tools:
            function = transform_mcp_tool_to_openai_tool(tool)["function"]
            hints = tool.annotations
            listed.append(
                ListedTool(
                    name=tool.name,
                    description=(tool.description or "").strip(),
                    parameters=dict(function.get("parameters") or {}),
                    read_only=bool(hints is not None and hints.read_only_hint is True),
                )
            )
        return listed

    return await _with_session(server, http, seconds, listing)


async def call_tool(
    server: McpServer,
    name: str,
    arguments: dict[str, Any],
    *,
    http: httpx2.AsyncClient,
    seconds: float,
) -> Answer:
    async def calling(session: ClientSession) -> Answer:
        result = await session.call_tool(name, arguments, read_timeout_seconds=seconds)
        return _answer(result)

    return await _with_session(server, http, seconds, calling)


def _answer(result: CallToolResult) -> Answer:
    parts = [block.text for block in result.content if isinstance(block, TextContent)]
    others = [block.type for block in result.content if not isinstance(block, TextContent)]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    if others:
        parts.append(f"(also {', '.join(others)} content, not shown)")
    return Answer(text="\n".join(parts), is_error=bool(result.is_error))


async def _with_session(
    server: McpServer, http: httpx2.AsyncClient, seconds: float, work: Any
) -> Any:
    try:
        with anyio.fail_after(seconds):
            async with (
                streamable_http_client(server.url, http_client=http) as (read, write),
                ClientSession(read, write, read_timeout_seconds=seconds, client_info=CLIENT) as s,
            ):
                await s.initialize()
                return await work(s)
    except TimeoutError:
        raise McpUnreachable(f"no answer within {seconds:g} s") from None
    except Exception as error:  # the SDK's task groups raise groups of what went wrong
        cause = _first(error)
        if isinstance(cause, MCPError) and cause.code in REQUEST_ERRORS:
            raise McpRefused(cause.message[:300]) from None
        if isinstance(cause, TimeoutError):
            raise McpUnreachable(f"no answer within {seconds:g} s") from None
        raise McpUnreachable(_said(cause)) from None


def _first(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _said(error: BaseException) -> str:
    """What went wrong, without the URL's query or a header (never a secret)."""
    if isinstance(error, MCPError):
        return f"it answered an error ({error.message[:200]})"
    text = str(error).split("\n")[0][:200]
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
