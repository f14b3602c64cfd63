"""What a person did with tomo's buttons: the Interactivity request body, read defensively.

Slack posts it `application/x-www-form-urlencoded` with one `payload` field holding JSON
(docs.slack.dev/interactivity/handling-user-interaction; bolt-python's tests/scenario_tests/
test_block_actions.py build their bodies that way). A `block_actions` payload names the person
(`user.id`), where the message is (`container.channel_id`, `container.message_ts`; also
`channel.id` and `message.ts`) and the actions taken: a feedback button's action has `type`
`feedback_buttons`, our `action_id` and `block_id`, and the clicked button's `value`. Any other
shape (another payload type, a missing field, a field of another type) is no click.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from app.slack.guards import slack_id
from app.slack.interactive.approval_blocks import APPROVE, DENY
from app.slack.interactive.feedback_blocks import ACTION_ID, NEGATIVE, POSITIVE, claim_of_block
from app.slack.timestamps import slack_ts

MAX_FIELDS = 20
MAX_ID_LENGTH = 32  # Slack's ids and timestamps are far shorter; the columns' size


@dataclass(frozen=True)
class FeedbackClick:
    channel: str
    reply_ts: str  # the message the buttons are on
    user_id: str
    value: str  # positive, negative
    claim_id: int | None  # the reply claim the buttons were posted with


def payload_of(body: bytes) -> dict[str, Any] | None:
    """The form's `payload` JSON object; None when there is none."""
    try:
        fields = parse_qs(body.decode("utf-8"), max_num_fields=MAX_FIELDS)
        raw = fields.get("payload")
        payload = json.loads(raw[0]) if raw else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def feedback_clicks(payload: dict[str, Any]) -> list[FeedbackClick]:
    """The feedback button clicks a `block_actions` payload carries (usually one)."""
    clicked = _clicked(payload)
    if clicked is None:
        return []
    user, channel, reply_ts, actions = clicked
    clicks = []
    for action in actions:
        if not isinstance(action, dict) or action.get("type") != "feedback_buttons":
            continue
        if action.get("action_id") != ACTION_ID:
            continue
        value = action.get("value")
        if value not in (POSITIVE, NEGATIVE):
            continue
        claim = claim_of_block(action.get("block_id"))
        clicks.append(FeedbackClick(channel, reply_ts, user, str(value), claim))
    return clicks


@dataclass(frozen=True)
class ApprovalClick:
    """Approve or Deny on an approval card (app.slack.interactive.approval_blocks): a `button`
    action with our action_id, its value the approval's id."""

    channel: str
    card_ts: str
    user_id: str
    approval_id: int
    approved: bool
    response_url: str  # where an answer only the clicker sees goes


def approval_clicks(payload: dict[str, Any]) -> list[ApprovalClick]:
    clicked = _clicked(payload)
    if clicked is None:
        return []
    user, channel, card_ts, actions = clicked
    response_url = payload.get("response_url")
    clicks = []
    for action in actions:
        if not isinstance(action, dict) or action.get("type") != "button":
            continue
        if action.get("action_id") not in (APPROVE, DENY):
            continue
        value = action.get("value")
        if not isinstance(value, str) or not value.isdigit() or len(value) > 18:
            continue
        clicks.append(
            ApprovalClick(
                channel=channel,
                card_ts=card_ts,
                user_id=user,
                approval_id=int(value),
                approved=action.get("action_id") == APPROVE,
                response_url=response_url if isinstance(response_url, str) else "",
            )
        )
    return clicks


def _clicked(payload: dict[str, Any]) -> tuple[str, str, str, list[Any]] | None:
    """Who clicked, in which channel, on which message, and the actions of a `block_actions`
    payload; None when it is another type or any of them is missing."""
    if payload.get("type") != "block_actions":
        return None
    user = _id(_object(payload.get("user")).get("id"))
    container = _object(payload.get("container"))
    channel = _id(container.get("channel_id")) or _id(_object(payload.get("channel")).get("id"))
    message_ts = slack_ts(container.get("message_ts")) or slack_ts(
        _object(payload.get("message")).get("ts")
    )
    actions = payload.get("actions")
    if not user or not channel or not message_ts or not isinstance(actions, list):
        return None
    return user, channel, message_ts, actions


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _id(value: object) -> str:
    return value if slack_id(value) and len(value) <= MAX_ID_LENGTH else ""
