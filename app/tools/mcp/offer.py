"""Which of a server's tools tomo may offer (docs/tools.md#mcp): those MCP_SERVERS lists under
`tools` (or, with "read-only", those the server annotates readOnlyHint: true) and under
`approve`; nothing else, whatever the server lists. Each is offered as `{server}__{tool}` with
the server's description and input schema, in a stable order (the listed order; read-only
tools by name), so the prompt's start stays the same from one reply to the next."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from app.settings.mcp import McpServer
from app.tools.mcp.answers import ListedTool

logger = logging.getLogger(__name__)

SEPARATOR = "__"
# What OpenAI's function calling accepts as a name (other providers accept as much or more).
FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DESCRIPTION_CHARS = 1000  # a server's description, in every reply's prompt
SCHEMA_CHARS = 8000  # a tool's input schema, as JSON


@dataclass(frozen=True)
class OfferedTool:
    server: str
    tool: str
    description: str
    parameters: dict[str, Any] = field(hash=False, compare=False)
    approve: bool  # each call waits for a person's approval

    @property
    def name(self) -> str:
        return f"{self.server}{SEPARATOR}{self.tool}"

    def listing(self) -> dict[str, Any]:
        """What /tomo tools shows of it (app.db.mcp.state)."""
        return {"name": self.tool, "description": self.description[:200], "approve": self.approve}


def split_name(name: str) -> tuple[str, str | None]:
    """`jira__create_issue` -> ("jira", "create_issue"); `jira` -> ("jira", None)."""
    server, separator, tool = name.partition(SEPARATOR)
    return server, (tool if separator else None)


def offered(server: McpServer, listed: list[ListedTool]) -> list[OfferedTool]:
    """The tools tomo may offer of what `server` lists, in their stable order."""
    by_name = {tool.name: tool for tool in listed}
    if server.read_only:
        plain = sorted(tool.name for tool in listed if tool.read_only)
    else:
        plain = [name for name in server.tools if name in by_name]
    approved = [name for name in server.approve if name in by_name and name not in plain]
    missing = sorted({*(() if server.read_only else server.tools), *server.approve} - set(by_name))
    if missing:
        logger.warning("MCP server %s lists none of %s", server.name, ", ".join(missing))
    chosen = [(name, False) for name in plain] + [(name, True) for name in approved]
    tools = []
    for name, approve in chosen:
        tool = _offer(server.name, by_name[name], approve=approve)
        if tool is not None:
            tools.append(tool)
    return tools


def _offer(server: str, listed: ListedTool, *, approve: bool) -> OfferedTool | None:
    name = f"{server}{SEPARATOR}{listed.name}"
    if not FUNCTION_NAME.match(name):
        logger.warning("MCP tool %s: not a name a model can call; not offered", name[:100])
        return None
    if len(json.dumps(listed.parameters)) > SCHEMA_CHARS:
        logger.warning("MCP tool %s: its input schema is too large; not offered", name)
        return None
    description = " ".join(listed.description.split())[:DESCRIPTION_CHARS]
    return OfferedTool(
        server=server,
        tool=listed.name,
        description=description,
        parameters=listed.parameters,
        approve=approve,
    )
