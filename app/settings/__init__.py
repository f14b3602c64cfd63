"""All configuration of tomo, read from the environment (and `.env` when present): the fields in
`model`, what their values must be in `checks`, reading and writing them in `environment`,
MCP_SERVERS in `mcp`, the report a bad setting gives in `report`."""

from app.settings.checks import BOT_TOKEN_PREFIXES, KNOWN_TOOLS
from app.settings.environment import SettingsError, load_settings, settings_environment
from app.settings.model import DEFAULT_PERSONA_PROMPT, DatabaseSettings, Settings

__all__ = [
    "BOT_TOKEN_PREFIXES",
    "DEFAULT_PERSONA_PROMPT",
    "KNOWN_TOOLS",
    "DatabaseSettings",
    "Settings",
    "SettingsError",
    "load_settings",
    "settings_environment",
]
