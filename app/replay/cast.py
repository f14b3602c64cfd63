"""Who and where in a replayed conversation: Slack ids for the file's channels and people,
mentions written the way Slack sends them, and requests signed the way Slack signs them."""

from __future__ import annotations

import hashlib
import hmac
import re
import time

from app.replay.conversation import SLACK_ID, ReplayLine
from app.replay.slack import BOT_USER_ID


class Cast:
    """Slack ids for the file's channels and people, and their mentions turned into Slack's."""

    def __init__(self, lines: list[ReplayLine], persona_name: str) -> None:
        self.channels: dict[str, tuple[str, str]] = {}  # id -> (name, channel_type)
        self.channel_ids: dict[str, str] = {}
        self.people: dict[str, str] = {}  # id -> name
        self.user_ids: dict[str, str] = {}
        for line in lines:
            if line.channel not in self.channel_ids:
                prefix = "D" if line.channel_type == "im" else "C"
                known = SLACK_ID.match(line.channel)
                channel_id = line.channel if known else f"{prefix}{len(self.channels) + 1:02d}"
                self.channel_ids[line.channel] = channel_id
                self.channels[channel_id] = (line.channel, line.channel_type)
            if line.user not in self.user_ids:
                user_id = f"U{len(self.people) + 1:02d}"
                self.user_ids[line.user] = user_id
                self.people[user_id] = line.user
        self._bot_names = {"tomo", persona_name.lower()}

    def slack_text(self, text: str) -> str:
        def mention(match: re.Match[str]) -> str:
            name = match.group(1)
            if name.lower() in self._bot_names:
                return f"<@{BOT_USER_ID}>"
            user_id = self.user_ids.get(name)
            return f"<@{user_id}>" if user_id else match.group(0)

        return re.sub(r"@([\w.\-]+)", mention, text)


def signed(body: bytes, secret: str) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest.hexdigest()}",
        "Content-Type": "application/json",
    }
