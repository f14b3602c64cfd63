"""One tool of an MCP server, as a reply's model calls it: `{server}__{tool}` (docs/tools.md#mcp).

A tool listed under `tools` is called at once; its answer is data from that server, bounded
and fenced like a web page (templates/tools/mcp_result.j2), and nothing in it makes a call of
its own. A tool listed under `approve` is never called here: the call waits for the person's
approval (app.tools.mcp.approvals). A server that does not answer, is slow or fails gives a
result that says so, and the reply goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from app.llm.prompts import render
from app.tools.base import Asker, ToolResult, failed
from app.tools.fetch_url import defused
from app.tools.mcp.answers import McpRefused, McpUnreachable
from app.tools.mcp.offer import OfferedTool
from app.tools.mcp.servers import McpServers

logger = logging.getLogger(__name__)

ANSWER_CHARS = 5000  # of a server's answer, within the result's bound (app.tools.base)
CUT = "\n[…]"


class Approvals(Protocol):
    async def request(
        self, tool: OfferedTool, arguments: dict[str, Any], *, asker: Asker
    ) -> ToolResult: ...


# The servers and tools (`server__tool`) switched off in a channel (app.db.mcp.state).
SwitchedOff = Callable[[str], Awaitable[frozenset[str]]]


def is_off(tool: OfferedTool, switched_off: frozenset[str]) -> bool:
    return tool.server in switched_off or tool.name in switched_off


class McpTool:
    """Satisfies app.tools.base.Tool, its name and schema the server's (per instance)."""

    def __init__(
        self,
        offered: OfferedTool,
        *,
        servers: McpServers,
        approvals: Approvals | None,
        switched_off: SwitchedOff,
    ) -> None:
        self.offered = offered
        self.name = offered.name
        self.description = render(
            "tools/mcp_description.j2",
            description=offered.description,
            server=offered.server,
            approve=offered.approve,
        ).strip()
        self.parameters = offered.parameters
        self._servers = servers
        self._approvals = approvals
        self._switched_off = switched_off

    def progress(self, arguments: dict[str, Any]) -> str:
        if self.offered.approve:
            return f"Asking to use {self.name}"
        return f"Using {self.name}"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        tool = self.offered
        if is_off(tool, await self._switched_off(asker.channel)):
            return failed(f"{self.name} is switched off in this channel (/tomo tools)")
        if tool.approve:
            if self._approvals is None:
                return failed(f"{self.name} needs a person's approval, which cannot be asked here")
            return await self._approvals.request(tool, arguments, asker=asker)
        try:
            answer = await self._servers.call(tool, arguments)
        except McpUnreachable as error:
            return failed(
                f"the {tool.server} server did not answer ({error}); its tools are left out "
                "until it answers again. Answer without it"
            )
        except McpRefused as error:
            return failed(f"the {tool.server} server refused the call: {defused(str(error))}")
        return fenced(tool, answer.text, error=answer.is_error)


def fenced(tool: OfferedTool, text: str, *, error: bool) -> ToolResult:
    """A server's answer as the model reads it: marked as that server's data, bounded."""
    text = "\n".join(line.rstrip() for line in text.strip().splitlines())
    if len(text) > ANSWER_CHARS:
        text = text[:ANSWER_CHARS].rstrip() + CUT
    shown = render(
        "tools/mcp_result.j2", server=tool.server, tool=tool.tool, error=error, text=defused(text)
    )
    return ToolResult(text=shown, ok=not error).bounded()
