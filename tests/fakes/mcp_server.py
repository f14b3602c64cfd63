"""FakeMcp: an MCP server stand-in speaking Streamable HTTP on 127.0.0.1, built with the official
MCP Python SDK's own server side (mcp 2.3: `mcp.server.mcpserver.MCPServer`, its
`streamable_http_app()` served by uvicorn with its lifespan, as the SDK's
`run_streamable_http_async` serves it), so what tomo's client meets is what the SDK and the
spec (modelcontextprotocol.io, "Transports: Streamable HTTP") say a server sends.
tests/test_fakes_mcp.py checks it against the SDK's own client.

Its tools, like an issue tracker's: `search_issues` and `get_issue` annotated
`readOnlyHint: true`; `create_issue` and `delete_project` annotated as writing
(`readOnlyHint: false`, the latter destructive); `admin_export` read-only but never in a test's
allowlist. Every call is recorded with the request's headers; `answer(tool, text)` sets what a
tool returns; `fail(status)`, `slow(seconds)` and `heal()` make it answer an HTTP error, answer
late, or answer again; `hold(seconds)` makes `create_issue` answer that late once its call is
recorded (the call has reached the server and is being made).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from starlette.types import Receive, Scope, Send

from tests.fakes.server import Served, ServerThread

READ = ToolAnnotations(read_only_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True)


class FakeMcp(Served):
    def __init__(self, name: str = "fake-tracker") -> None:
        self._lock = threading.Lock()
        self._calls: list[dict[str, Any]] = []
        self._requests: list[dict[str, str]] = []
        self._answers: dict[str, str] = {}
        self._status: int | None = None
        self._delay = 0.0
        self._hold = 0.0
        self.server = MCPServer(name)
        self._tools()
        self._app = self.server.streamable_http_app()

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            await self._guarded(scope, receive, send)

        self._server = ServerThread(app, name=f"fake-mcp-{name}", lifespan="on")

    @property
    def url(self) -> str:
        return f"{self._server.base_url}/mcp"

    def reset(self) -> None:
        with self._lock:
            self._calls, self._requests, self._answers = [], [], {}
            self._status, self._delay, self._hold = None, 0.0, 0.0

    def hold(self, seconds: float) -> None:
        with self._lock:
            self._hold = seconds

    def answer(self, tool: str, text: str) -> None:
        with self._lock:
            self._answers[tool] = text

    def fail(self, status: int = 503) -> None:
        with self._lock:
            self._status = status

    def slow(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    def heal(self) -> None:
        with self._lock:
            self._status, self._delay = None, 0.0

    def calls(self, tool: str | None = None) -> list[dict[str, Any]]:
        """Each call made: {"tool", "arguments"}."""
        with self._lock:
            return [dict(c) for c in self._calls if tool is None or c["tool"] == tool]

    def headers(self) -> list[dict[str, str]]:
        """The headers of every HTTP request the server received."""
        with self._lock:
            return [dict(h) for h in self._requests]

    def _called(self, tool: str, **arguments: Any) -> str:
        with self._lock:
            self._calls.append({"tool": tool, "arguments": arguments})
            return self._answers.get(tool, "")

    def _tools(self) -> None:
        tool = self.server.tool

        @tool(annotations=READ)
        def search_issues(query: str) -> str:
            """Search the tracker's issues by words in their title or text."""
            return self._called("search_issues", query=query) or f"No issue matches {query!r}."

        @tool(annotations=READ)
        def get_issue(key: str) -> str:
            """One issue by its key (PROJ-123): title, status, assignee and text."""
            return self._called("get_issue", key=key) or f"{key}: Fix the login page (open)"

        @tool(annotations=WRITE)
        async def create_issue(title: str, body: str = "") -> str:
            """Create an issue with this title and text; answers its key."""
            answer = self._called("create_issue", title=title, body=body) or "Created PROJ-7"
            with self._lock:
                hold = self._hold
            await asyncio.sleep(hold)
            return answer

        @tool(annotations=DESTROY)
        def delete_project(key: str) -> str:
            """Delete a whole project and its issues."""
            return self._called("delete_project", key=key) or f"Deleted {key}"

        @tool(annotations=READ)
        def admin_export() -> str:
            """Export every issue of every project."""
            return self._called("admin_export") or "everything"

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The SDK's app, behind the failures a test asks for."""
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            with self._lock:
                self._requests.append(headers)
                status, delay = self._status, self._delay
            if delay:
                await asyncio.sleep(delay)
            if status is not None:
                await send({"type": "http.response.start", "status": status, "headers": []})
                await send({"type": "http.response.body", "body": b"unavailable"})
                return
        await self._app(scope, receive, send)
