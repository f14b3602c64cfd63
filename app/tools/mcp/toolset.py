"""The MCP servers' tools as a reply offers them (app.tools.registry's `more`): after tomo's own,
those of the servers that answer now, less what `/tomo tools off` switched off in the reply's
channel; each as its McpTool, built once per listing so the definitions stay the same."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.mcp.state import switched_off
from app.tools.base import Tool
from app.tools.mcp.offer import OfferedTool
from app.tools.mcp.servers import McpServers
from app.tools.mcp.tool import Approvals, McpTool, is_off
from app.tools.registry import definition


class McpTools:
    def __init__(
        self, servers: McpServers, *, engine: AsyncEngine, approvals: Approvals | None
    ) -> None:
        self.servers = servers
        self._engine = engine
        self._approvals = approvals
        self._built: dict[OfferedTool, McpTool] = {}

    async def switched_off(self, channel: str) -> frozenset[str]:
        return await switched_off(self._engine, channel)

    def _tool(self, offered: OfferedTool) -> McpTool:
        tool = self._built.get(offered)
        if tool is None or tool.parameters != offered.parameters:
            tool = McpTool(
                offered,
                servers=self.servers,
                approvals=self._approvals,
                switched_off=self.switched_off,
            )
            self._built[offered] = tool
        return tool

    async def definitions(self, channel: str) -> list[dict[str, Any]]:
        """The definitions of the tools a reply in `channel` may call, in their stable order."""
        off = await self.switched_off(channel)
        return [
            definition(cast(Tool, self._tool(offered)))
            for offered in self.servers.offered()
            if not is_off(offered, off)
        ]

    def get(self, name: str) -> Tool | None:
        offered = self.servers.tool(name)
        return None if offered is None else cast(Tool, self._tool(offered))

    def names(self) -> list[str]:
        return [tool.name for tool in self.servers.offered()]
