"""What the database keeps of the MCP servers (app.db.models.mcp): each server's last state and
tools, written by the process that runs replies and read by /healthz and `/tomo tools`; and
the servers and tools switched off per channel."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.models.mcp import McpServerState, McpSwitch

OK = "ok"
UNREACHABLE = "unreachable"


async def record_server(
    engine: AsyncEngine,
    *,
    name: str,
    state: str,
    tools: list[dict[str, Any]] | None,
    error: str | None = None,
) -> None:
    """A server's state now; `tools` None keeps the tools last listed (shown while it is down)."""
    values: dict[str, Any] = {"state": state, "error": (error or None) and error[:300]}
    values["checked_at"] = time.time()
    if tools is not None:
        values["tools"] = json.dumps(tools, ensure_ascii=False)
    async with engine.begin() as connection:
        changed = await connection.execute(
            update(McpServerState).where(col(McpServerState.name) == name).values(**values)
        )
        if changed.rowcount:
            return
    try:
        async with engine.begin() as connection:
            await connection.execute(
                insert(McpServerState).values(name=name, **{"tools": "[]", **values})
            )
    except IntegrityError:  # another instance's process wrote it first: theirs is as new
        pass


async def server_states(engine: AsyncEngine) -> dict[str, McpServerState]:
    async with engine.connect() as connection:
        rows = await connection.execute(select(McpServerState))
        return {row.name: McpServerState.model_validate(row._mapping) for row in rows}


def tools_of(state: McpServerState) -> list[dict[str, Any]]:
    try:
        tools = json.loads(state.tools)
    except ValueError:
        return []
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


async def switched_off(engine: AsyncEngine, channel: str) -> frozenset[str]:
    """The servers and tools (`server__tool`) switched off in this channel."""
    async with engine.connect() as connection:
        rows = await connection.execute(
            select(col(McpSwitch.name)).where(col(McpSwitch.channel) == channel)
        )
        return frozenset(str(name) for name in rows.scalars())


async def switch(engine: AsyncEngine, *, channel: str, name: str, on: bool, user_id: str) -> bool:
    """Switch `name` on or off in this channel; False when it already was."""
    where = (col(McpSwitch.channel) == channel, col(McpSwitch.name) == name)
    async with engine.begin() as connection:
        if on:
            removed = await connection.execute(delete(McpSwitch).where(*where))
            return bool(removed.rowcount)
        found = await connection.execute(select(col(McpSwitch.name)).where(*where))
        if found.first() is not None:
            return False
    try:
        async with engine.begin() as connection:
            await connection.execute(
                insert(McpSwitch).values(
                    channel=channel, name=name, user_id=user_id, at=time.time()
                )
            )
    except IntegrityError:  # switched off at the same moment by someone else
        return False
    return True
