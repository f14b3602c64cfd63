"""Tools for the loop's own tests (tests/conversation/reply/test_tool_loop.py, tests/
test_restart_tools.py): the real tools are tested on their own; these only show what the loop
does with a tool that answers, one that raises, and what each was asked. They take the names
of real tools (TOOLS accepts only those) and are put in the registry by the tests."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from app.tools.base import Asker, ToolResult
from app.tools.kit import Kit

PERMALINK = "https://example.slack.com/archives/C1/p1700000000000100"


class Lookup:
    """Stands in for `search_messages`: finds one message for any query."""

    name: ClassVar[str] = "search_messages"
    description: ClassVar[str] = "Search the messages of the workspace for words."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "words to find"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20},
        },
        "required": ["query"],
    }
    asked: ClassVar[list[tuple[dict[str, Any], Asker]]] = []
    _lock = threading.Lock()

    def __init__(self, kit: Kit) -> None:
        self.kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        return f"Searching messages for {arguments.get('query')}"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        with self._lock:
            Lookup.asked.append((arguments, asker))
        found = f"<@U2> in #general: the {arguments['query']} is on Friday ({PERMALINK})"
        return ToolResult(text=found, sources=(PERMALINK,))


class Broken:
    """Stands in for `read_thread`: always raises."""

    name: ClassVar[str] = "read_thread"
    description: ClassVar[str] = "Read a whole thread."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"permalink": {"type": "string"}},
        "required": [],
    }

    def __init__(self, kit: Kit) -> None:
        self.kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        return "Reading a thread"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        raise RuntimeError("the database went away")
