"""Tools from MCP servers (docs/tools.md#mcp): the servers MCP_SERVERS names, what each may
offer, the calls that run at once and those a person approves first. Imported only where
MCP_SERVERS is set; the SDK itself only on a thread, at start (app.tools.mcp.servers)."""
