"""The MCP servers of MCP_SERVERS, as the process that runs replies knows them
(docs/tools.md#mcp): whether each answers, and what tomo may offer from it.

Each server's tools are listed at start and every CHECK_SECONDS after (at least once a
minute), and each state is written to the database, where /healthz and `/tomo tools` read it.
A server that does not answer a listing or a call in CALL_SECONDS, or answers with an error
status, is `unreachable`: its tools drop out of every reply's offer until a listing succeeds
again. The SDK (app.tools.mcp.client) is imported on a thread when the servers are started, so
neither a request nor a job's event loop waits for its import.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.mcp.state import OK, UNREACHABLE, record_server
from app.llm import litellm_module
from app.settings.mcp import McpServer
from app.tools.mcp.answers import Answer, McpUnreachable
from app.tools.mcp.offer import OfferedTool, offered

logger = logging.getLogger(__name__)

CALL_SECONDS = 10.0  # a listing or a call, from connecting to its answer
CHECK_SECONDS = 60.0  # every server is listed at least this often


@dataclass
class _Server:
    config: McpServer
    state: str = UNREACHABLE  # until it first answers
    tools: list[OfferedTool] = field(default_factory=list)
    http: Any = None  # its HTTP client (app.tools.mcp.client.http_client), made at first use


class McpServers:
    def __init__(
        self,
        servers: tuple[McpServer, ...],
        *,
        engine: AsyncEngine,
        call_seconds: float | None = None,
        check_seconds: float | None = None,
    ) -> None:
        """The seconds default to CALL_SECONDS and CHECK_SECONDS (read now: tests lower them)."""
        self._servers = {server.name: _Server(server) for server in servers}
        self._engine = engine
        self.call_seconds = CALL_SECONDS if call_seconds is None else call_seconds
        self.check_seconds = CHECK_SECONDS if check_seconds is None else check_seconds
        self._client: ModuleType | None = None
        self._watching: asyncio.Task[None] | None = None
        self.checked = asyncio.Event()  # every server was tried once

    def start(self) -> None:
        if self._watching is None:
            self._watching = asyncio.create_task(self._watch(), name="mcp-servers")

    async def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
        for server in self._servers.values():
            if server.http is not None:
                await server.http.aclose()
                server.http = None

    async def _watch(self) -> None:
        while True:
            await asyncio.gather(*(self.check(name) for name in self._servers))
            self.checked.set()
            await asyncio.sleep(self.check_seconds)

    async def _sdk(self, server: _Server) -> ModuleType:
        """The SDK's client module (imported on a thread, once), the server's HTTP client made."""
        if self._client is None:
            # LiteLLM first, through its one loader (app.llm.client): the client imports
            # LiteLLM's MCP helpers, and a second thread importing LiteLLM while the job
            # worker's start-up imports it finds it half-made (an ImportError at start).
            await litellm_module()
            self._client = await asyncio.to_thread(importlib.import_module, "app.tools.mcp.client")
        if server.http is None:
            server.http = self._client.http_client(server.config, seconds=self.call_seconds)
        return self._client

    async def check(self, name: str) -> None:
        """List the server's tools now: it answers (its tools are offered) or it does not."""
        server = self._servers[name]
        try:
            client = await self._sdk(server)
            listed = await client.list_tools(
                server.config, http=server.http, seconds=self.call_seconds
            )
        except Exception as error:  # McpUnreachable, McpRefused, or the SDK not importing
            await self._down(server, str(error) or type(error).__name__)
            return
        server.tools = offered(server.config, listed)
        if server.state != OK:
            logger.info("MCP server %s answers: %d tool(s) offered", name, len(server.tools))
        server.state = OK
        await self._record(server, tools=[tool.listing() for tool in server.tools])

    async def _down(self, server: _Server, why: str) -> None:
        if server.state != UNREACHABLE or not self.checked.is_set():
            logger.warning("MCP server %s is unreachable: %s", server.config.name, why)
        server.state = UNREACHABLE
        await self._record(server, error=why)

    async def _record(
        self, server: _Server, *, tools: list[dict[str, Any]] | None = None, error: str = ""
    ) -> None:
        try:
            await record_server(
                self._engine, name=server.config.name, state=server.state, tools=tools, error=error
            )
        except Exception:
            logger.exception("could not record the state of MCP server %s", server.config.name)

    @property
    def states(self) -> dict[str, str]:
        return {name: server.state for name, server in self._servers.items()}

    def offered(self) -> list[OfferedTool]:
        """The tools of the servers that answer, in MCP_SERVERS' order and their own."""
        return [
            tool for server in self._servers.values() if server.state == OK for tool in server.tools
        ]

    def approved(self, server: str, tool: str) -> OfferedTool | None:
        """A tool MCP_SERVERS lists under `approve` now (a restart may have changed it), to be
        called after a person approved it, whether or not the server answers now."""
        found = self._servers.get(server)
        if found is None or tool not in found.config.approve:
            return None
        known = next((t for t in found.tools if t.tool == tool), None)
        return known or OfferedTool(server, tool, description="", parameters={}, approve=True)

    def tool(self, name: str) -> OfferedTool | None:
        return next((tool for tool in self.offered() if tool.name == name), None)

    async def call(self, tool: OfferedTool, arguments: dict[str, Any]) -> Answer:
        """Call the tool now (McpUnreachable: its server drops out until it answers again;
        McpRefused: the server refused this call)."""
        server = self._servers[tool.server]
        try:
            client = await self._sdk(server)
        except Exception as error:  # the SDK did not import: nothing was sent
            failure = McpUnreachable(f"its client did not load ({type(error).__name__})")
        else:
            try:
                answer: Answer = await client.call_tool(
                    server.config, tool.tool, arguments, http=server.http, seconds=self.call_seconds
                )
            except McpUnreachable as error:
                failure = error
            else:
                return answer
        await self._down(server, str(failure))
        raise failure
