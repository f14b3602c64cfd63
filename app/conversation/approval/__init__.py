"""What follows a person's decision on a call that waited for approval (tools from MCP servers)."""
