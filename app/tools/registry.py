"""Which tools a reply offers its model, and their definitions as the model reads them.

Each tool's class is named here by "module:Class" and imported only when the process that
runs replies builds its tools (never on the acknowledgement path). The offer follows the
settings: the names of TOOLS in their fixed order, `web_search` only with a
WEB_SEARCH_PROVIDER, none when MAX_TOOL_ROUNDS is 0 or the reply model cannot call functions.
Definitions are built once and handed out the same every time, so the start of every reply's
prompt (tools included) is byte for byte the same and providers can cache it. Tools from MCP
servers (`more`: app.tools.mcp.toolset) come after tomo's own, per channel.
"""

from __future__ import annotations

import copy
import importlib
import logging
from typing import Any, Protocol

from app.settings import Settings
from app.tools.base import Tool
from app.tools.kit import Kit

logger = logging.getLogger(__name__)

# Tool name -> "module:Class" (or the class itself). One line per tool.
CLASSES: dict[str, str | type[Any]] = {
    "search_messages": "app.tools.search_messages:SearchMessages",
    "read_thread": "app.tools.read_thread:ReadThread",
    "note": "app.tools.note:NoteTool",
    "forget_note": "app.tools.note:ForgetNoteTool",
    "fetch_url": "app.tools.fetch_url:FetchUrlTool",
    "web_search": "app.tools.web_search:WebSearchTool",
}
# A name in TOOLS that offers more than one tool: the notebook writes and removes notes.
OFFERS = {"note": ("note", "forget_note")}


def chosen(settings: Settings) -> tuple[str, ...]:
    """The names of the tools the settings offer, in TOOLS' fixed order."""
    if settings.MAX_TOOL_ROUNDS == 0:
        return ()
    return tuple(
        offered
        for name in settings.TOOLS
        if name != "web_search" or settings.WEB_SEARCH_PROVIDER is not None
        for offered in OFFERS.get(name, (name,))
    )


def _class_of(name: str) -> type[Any] | None:
    where = CLASSES.get(name)
    if where is None or isinstance(where, type):
        return where
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute)  # type: ignore[no-any-return]


def class_definitions(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The definitions of the tools among `names` this build has, in that order, from their
    classes alone (for measuring prompts; a reply's come from its Toolbox)."""
    return [definition(cls) for name in names if (cls := _class_of(name)) is not None]


def definition(tool: Tool | type[Any]) -> dict[str, Any]:
    """A tool as OpenAI's function calling takes it (LiteLLM carries it to other providers)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


class MoreTools(Protocol):
    """Tools beyond tomo's own, which may change from one reply to the next (MCP servers)."""

    async def definitions(self, channel: str) -> list[dict[str, Any]]:
        """Those a reply in `channel` may call, in a stable order."""
        ...

    def get(self, name: str) -> Tool | None: ...


class Toolbox:
    """The tools of the settings, built once with the process's Kit; `more` after them."""

    def __init__(self, settings: Settings, kit: Kit, *, more: MoreTools | None = None) -> None:
        self.more = more
        self.tools: dict[str, Tool] = {}
        for name in chosen(settings):
            cls = _class_of(name)
            if cls is None:
                logger.warning("tool %s is not available in this build; not offered", name)
                continue
            self.tools[name] = cls(kit)
        self._definitions = [copy.deepcopy(definition(t)) for t in self.tools.values()]

    def definitions(self) -> list[dict[str, Any]]:
        """The tools' definitions, in their fixed order (a copy: the same every time)."""
        return copy.deepcopy(self._definitions)

    async def offered(self, channel: str) -> list[dict[str, Any]]:
        """The definitions a reply in `channel` is given: tomo's own, then `more`'s."""
        more = await self.more.definitions(channel) if self.more is not None else []
        return self.definitions() + copy.deepcopy(more)

    def get(self, name: str) -> Tool | None:
        tool = self.tools.get(name)
        if tool is None and self.more is not None:
            return self.more.get(name)
        return tool

    def __bool__(self) -> bool:
        return bool(self.tools) or self.more is not None
