"""What an MCP server's answers are to tomo, and how asking one fails: plain types, with none
of the SDK's imports (app.tools.mcp.client speaks to the servers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class McpUnreachable(Exception):
    """The server did not answer: down, slower than allowed, an error status, a broken answer."""


class McpRefused(Exception):
    """The server answered the request with an error of its own (the server is up)."""


@dataclass(frozen=True)
class ListedTool:
    name: str
    description: str
    parameters: dict[str, Any]  # the input schema, as OpenAI's function calling takes it
    read_only: bool  # annotated readOnlyHint: true


@dataclass(frozen=True)
class Answer:
    text: str  # the content's text parts, and the structured content when there is no text
    is_error: bool  # the tool said its call failed
