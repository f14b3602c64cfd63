"""`/tomo tools` (docs/tools.md#tomo-tools): the tools tomo may use in this channel, and
`/tomo tools off NAME` / `on NAME` to switch an MCP server (`jira`) or one of its tools
(`jira__create_issue`) off or on here. tomo's own tools follow TOOLS for the whole workspace.

Answered from the settings and the database alone: what each MCP server offers and whether it
answers is what the process that runs replies last wrote there (app.db.mcp.state); this
process never speaks MCP itself.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.commands.words import normalize
from app.db.mcp.state import OK, UNREACHABLE, server_states, switch, switched_off, tools_of
from app.settings import Settings

logger = logging.getLogger(__name__)

OFF = frozenset({"off", "オフ", "無効", "止める"})
ON = frozenset({"on", "オン", "有効", "使う"})
SEPARATOR = "__"  # app.tools.mcp.offer's


def own_tools(settings: Settings) -> list[str]:
    """tomo's own tools as TOOLS offers them (web_search only with a provider)."""
    if settings.MAX_TOOL_ROUNDS == 0:
        return []
    return [
        name
        for name in settings.TOOLS
        if name != "web_search" or settings.WEB_SEARCH_PROVIDER is not None
    ]


async def listing(
    engine: AsyncEngine, settings: Settings, *, channel: str, stale_after: float
) -> dict[str, Any]:
    """What `tools_list` shows: tomo's own tools, then each MCP server with its tools, whether
    it answers, and what is off here."""
    states = await server_states(engine)
    off = await switched_off(engine, channel)
    servers = []
    for config in settings.mcp_servers:
        state = states.get(config.name)
        answering = (
            state is not None and state.state == OK and time.time() - state.checked_at < stale_after
        )
        tools = [
            {
                "name": f"{config.name}{SEPARATOR}{tool.get('name')}",
                "approve": bool(tool.get("approve")),
                "off": f"{config.name}{SEPARATOR}{tool.get('name')}" in off,
            }
            for tool in (tools_of(state) if state is not None else [])
        ]
        servers.append(
            {
                "name": config.name,
                "state": OK if answering else UNREACHABLE,
                "off": config.name in off,
                "tools": tools,
            }
        )
    return {"own": own_tools(settings), "servers": servers}


def known_names(settings: Settings, listed: dict[str, Any]) -> set[str]:
    """What may be switched: each server, and each tool MCP_SERVERS allows or it listed."""
    names = {server.name for server in settings.mcp_servers}
    for server in settings.mcp_servers:
        allowed = [*server.approve, *(() if server.read_only else server.tools)]
        names.update(f"{server.name}{SEPARATOR}{tool}" for tool in allowed)
    for server in listed["servers"]:
        names.update(tool["name"] for tool in server["tools"])
    return names


async def switch_tool(
    engine: AsyncEngine,
    settings: Settings,
    *,
    channel: str,
    user: str,
    words: str,
    stale_after: float,
) -> tuple[str, dict[str, Any]]:
    """`off NAME` or `on NAME`: the answer's macro and its values."""
    parts = words.split()
    verb = normalize(parts[0]) if parts else ""
    if len(parts) != 2 or verb not in OFF | ON:
        return "tools_usage", {}
    name, on = parts[1].strip().lower(), verb in ON
    listed = await listing(engine, settings, channel=channel, stale_after=stale_after)
    names = known_names(settings, listed)
    if name not in names:
        return "tools_unknown", {"name": name, "names": sorted(names)}
    changed = await switch(engine, channel=channel, name=name, on=on, user_id=user)
    server = name.partition(SEPARATOR)[0]
    server_off = on and name != server and server in await switched_off(engine, channel)
    logger.info("tool %s switched %s in %s by %s", name, "on" if on else "off", channel, user)
    return "tools_switched", {"name": name, "on": on, "changed": changed, "server_off": server_off}
