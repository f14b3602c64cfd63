"""bench.busy_day --mcp's MCP server: an issue tracker's search, built with the official MCP
Python SDK's server side (`MCPServer`, its Streamable HTTP app) and served by uvicorn on
127.0.0.1, as tests/fakes/mcp_server.py serves the tests' (which checks the shape against the
SDK's client). Its answer is a page of issues (about 4 KB), so the reply's round carries what a
real tracker's search gives.

    .venv/bin/python -m uvicorn bench.mcp_server:app --host 127.0.0.1 --port PORT
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

FOUND = "PROJ-12: Review the offsite roadmap"
server = MCPServer("bench-tracker")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_issues(query: str) -> str:
    """Search the tracker's issues by words in their title or text."""
    issues = [f"{FOUND} (open, matches {query!r})"]
    issues += [
        f"PROJ-{n}: Issue number {n} about {query}, with a description long enough to read "
        f"like a tracker's summary line, assigned to someone on the team (status open)"
        for n in range(13, 40)
    ]
    return "\n".join(issues)


app = server.streamable_http_app()
