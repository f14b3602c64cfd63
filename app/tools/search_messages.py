"""`search_messages(query, channel=None, days=None, limit=10)`: what was said, found in the
messages tomo stored (app.db.search.service), only where the reader may see (app.gate.scope)."""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

from app.db.search.index import catch_up
from app.db.search.service import Where, search
from app.db.search.terms import terms_of
from app.tools.base import Asker, ToolResult, failed
from app.tools.kit import Kit
from app.tools.messages_shown import clip, link, named, place, visible_channel, when

DEFAULT_LIMIT, MAX_LIMIT = 10, 20
MESSAGE_CHARS = 400  # of each message's text
NOTHING = "No messages found."
_ARGUMENTS = frozenset({"query", "channel", "days", "limit"})


class SearchMessages:
    name: ClassVar[str] = "search_messages"
    description: ClassVar[str] = (
        "Search the messages of this Slack workspace that you may show here, for words or "
        "parts of words in any language. Best matches first, each with its channel, time, "
        "author and permalink. An empty query lists the newest messages."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": 'Words to find (all must occur; "quotes" keep a phrase); '
                "empty for the newest messages.",
            },
            "channel": {
                "type": "string",
                "description": "Only this channel: its id, or its name with or without #.",
            },
            "days": {"type": "number", "description": "Only the last this many days."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": f"How many messages, at most {MAX_LIMIT} (default {DEFAULT_LIMIT}).",
            },
        },
        "required": ["query"],
    }

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        query = arguments.get("query")
        if isinstance(query, str) and query.strip():
            return f"Searching messages for “{clip(query, 60)}”"
        return "Reading the newest messages"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        problem = _problem(arguments)
        if problem is not None:
            return failed(problem)
        query = arguments.get("query") or ""
        limit = min(int(arguments.get("limit") or DEFAULT_LIMIT), MAX_LIMIT)
        scope = await self._kit.scopes.for_asker(asker)
        now = time.time()
        since = [now - float(arguments["days"]) * 86400.0] if arguments.get("days") else []
        kept = self._kit.settings.retention_seconds
        since += [now - kept] if kept else []
        if query.strip():
            await catch_up(self._kit.engine)  # the messages of the last second too
        async with self._kit.engine.connect() as connection:
            channel = None
            if arguments.get("channel"):
                channel = await visible_channel(connection, scope, str(arguments["channel"]))
                if channel is None:
                    return ToolResult(NOTHING)
            where = Where(
                scope=scope,
                since=max(since) if since else None,
                channel=channel["id"] if channel else None,
            )
            rows = await search(connection, terms_of(query), where, limit=limit)
            found, channels = await named(connection, rows, self._kit.identity.me())
        if not found:
            return ToolResult(NOTHING)
        lines, sources = [], []
        for number, (channel_id, message) in enumerate(found, 1):
            url = link(self._kit.identity.url, channel=channel_id, message=message)
            where_said = place(channels.get(channel_id), channel_id, here=asker.channel)
            lines.append(f"{number}. {where_said}, {when(message.created_at)}, {url or 'no link'}")
            lines.append(f"   {clip(message.said(), MESSAGE_CHARS)}")
            sources += [url] if url else []
        heading = f"{len(found)} messages" + (" (best matches first):" if query.strip() else ":")
        return ToolResult("\n".join([heading, *lines]), sources=tuple(sources)).bounded()


def _problem(arguments: dict[str, Any]) -> str | None:
    """What is wrong with the arguments, or None."""
    unknown = sorted(set(arguments) - _ARGUMENTS)
    if unknown:
        return f"unknown argument {', '.join(unknown)}; search_messages takes {sorted(_ARGUMENTS)}"
    query, channel = arguments.get("query"), arguments.get("channel")
    if query is not None and not isinstance(query, str):
        return "query must be a string"
    if channel is not None and not isinstance(channel, str):
        return "channel must be a string: a channel id or name"
    days = arguments.get("days")
    if days is not None and (
        isinstance(days, bool)
        or not isinstance(days, int | float)
        or not math.isfinite(days)
        or days <= 0
    ):
        return "days must be a number above 0"
    limit = arguments.get("limit")
    if limit is not None and (
        isinstance(limit, bool)
        or not isinstance(limit, int | float)
        or not math.isfinite(limit)
        or limit != int(limit)
        or limit < 1
    ):
        return f"limit must be a whole number from 1 to {MAX_LIMIT}"
    return None
