"""`/tomo` as Slack sends it: a form-encoded body, signed like events.

The fields and their order follow Slack's documentation of slash command payloads ("Implementing
slash commands", docs.slack.dev / api.slack.com/interactivity/slash-commands) and the body in
slackapi/bolt-python's tests/scenario_tests_async/test_slash_command.py; ids and tokens are
replaced. `channel_name` is "directmessage" in a DM and "privategroup" where Slack will not say.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.conftest import SIGNING_SECRET, Tomo
from tests.signing import sign


def command_form(
    text: str,
    *,
    response_url: str,
    channel: str = "C1",
    channel_name: str = "general",
    user: str = "U1",
    user_name: str = "alice",
) -> dict[str, str]:
    return {
        "token": "deprecated-verification-token",
        "team_id": "T0001",
        "team_domain": "example",
        "channel_id": channel,
        "channel_name": channel_name,
        "user_id": user,
        "user_name": user_name,
        "command": "/tomo",
        "text": text,
        "api_app_id": "A1",
        "is_enterprise_install": "false",
        "response_url": response_url,
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
    }


def signed(body: bytes, **options: Any) -> dict[str, str]:
    headers = sign(body, secret=SIGNING_SECRET, **options)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    return headers


async def post_command(tomo: Tomo, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return await tomo.client.post("/slack/commands", content=body, headers=headers)


async def run_command(tomo: Tomo, text: str, *, response_url: str, **fields: Any) -> dict[str, Any]:
    """Run `/tomo TEXT`; the ephemeral answer (asserts a 200 and its shape)."""
    body = urlencode(command_form(text, response_url=response_url, **fields)).encode()
    response = await post_command(tomo, body, signed(body))
    assert response.status_code == 200, response.text
    answer = json.loads(response.content)
    assert answer["response_type"] == "ephemeral" and isinstance(answer["text"], str)
    return answer
