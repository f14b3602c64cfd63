"""A feedback button's click as Slack sends it to the Interactivity request URL: a signed,
form-encoded body whose one field `payload` holds the `block_actions` JSON.

The payload's fields and their nesting follow the `block_actions` body in slackapi/bolt-python's
tests/scenario_tests/test_block_actions.py (`type`, `user`, `api_app_id`, `token`, `container`
with `message_ts` and `channel_id`, `trigger_id`, `team`, `channel`, `response_url`, `actions`),
the `message` object Slack adds for a message's buttons (bolt-python's docs/english/concepts/
adding-agent-features.md reads `body["message"]["ts"]` and `body["actions"][0]["value"]` in its
feedback handler), and the feedback_buttons element's action: its `type`, `action_id`,
`block_id` and the clicked button's `value` (docs.slack.dev/reference/block-kit/block-elements/
feedback-buttons-element). Ids, tokens and times are ours.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.conftest import SIGNING_SECRET, Tomo
from tests.signing import sign


def feedback_payload(
    *,
    channel: str,
    message_ts: str,
    value: str,
    user: str = "U1",
    block_id: str = "tomo_feedback:1",
    thread_ts: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "message",
        "user": "UBOT",
        "bot_id": "BBOT",
        "ts": message_ts,
        "text": "the reply",
        "blocks": [],
    }
    if thread_ts:
        message["thread_ts"] = thread_ts
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": "T0001"},
        "api_app_id": "A1",
        "token": "deprecated-verification-token",
        "container": {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
            **({"thread_ts": thread_ts} if thread_ts else {}),
        },
        "trigger_id": "111.222.valid",
        "team": {"id": "T0001", "domain": "example"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "general"},
        "message": message,
        "state": {"values": {}},
        "response_url": "https://hooks.slack.com/actions/T0001/1/random-value",
        "actions": [
            {
                "type": "feedback_buttons",
                "action_id": "tomo_feedback",
                "block_id": block_id,
                "value": value,
                "action_ts": "1700000000.000200",
            }
        ],
    }


def form(payload: object) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


def signed(body: bytes, **options: Any) -> dict[str, str]:
    headers = sign(body, secret=SIGNING_SECRET, **options)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    return headers


async def interact(tomo: Tomo, payload: object, **options: Any) -> httpx.Response:
    body = form(payload)
    return await tomo.client.post(
        "/slack/interactions", content=body, headers=signed(body, **options)
    )
