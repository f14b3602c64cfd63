"""A slash command's request body: form-encoded fields, as Slack sends them."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

MAX_FIELDS = 100


@dataclass(frozen=True)
class SlashCommand:
    command: str  # "/tomo"
    text: str  # what follows the command, as typed
    team_id: str
    channel_id: str
    channel_name: str  # "directmessage" or "privategroup" where Slack will not say
    user_id: str
    response_url: str  # answers for up to 30 minutes after the command
    api_app_id: str
    trigger_id: str


def parse_command(body: bytes) -> SlashCommand | None:
    """The command in a form body; None when it is not one (no channel or no user)."""
    try:
        fields = parse_qs(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=False,
            max_num_fields=MAX_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):
        return None

    def field(name: str) -> str:
        values = fields.get(name)
        return values[0] if values else ""

    command = SlashCommand(
        command=field("command"),
        text=field("text"),
        team_id=field("team_id"),
        channel_id=field("channel_id"),
        channel_name=field("channel_name"),
        user_id=field("user_id"),
        response_url=field("response_url"),
        api_app_id=field("api_app_id"),
        trigger_id=field("trigger_id"),
    )
    if not command.channel_id or not command.user_id:
        return None
    return command
