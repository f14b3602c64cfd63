"""What the database keeps for the tools from MCP servers: each server's state and the tools
switched off per channel (`state`), the calls waiting for a person's approval (`approvals`)."""
