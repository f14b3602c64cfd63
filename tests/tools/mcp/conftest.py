"""The MCP tests' fixtures (tests/tools/mcp/helpers.py)."""

from tests.tools.mcp.helpers import session_tracker, tracker

__all__ = ["session_tracker", "tracker"]
