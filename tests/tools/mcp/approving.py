"""A click on an approval card's button as Slack sends it, and what the approval tests share.

The `block_actions` body is the one of tests/interactions.py (bolt-python's
tests/scenario_tests/test_block_actions.py), with a `button` action as Slack's block_actions
reference and bolt-js's ButtonAction type have it (docs.slack.dev/reference/interaction-payloads/
block_actions-payload; docs.slack.dev/tools/bolt-js/reference/interfaces/ButtonAction): `type`
"button", `action_id`, `block_id`, `text` (plain_text), `value`, `style`, `action_ts`; and the
interaction's `response_url` under hooks.slack.com/actions/ (here the response_url stand-in).
"""

from __future__ import annotations

from typing import Any

import httpx

from app.jobs.backend import Timer
from app.slack.interactive.approval_blocks import APPROVE, BLOCK_PREFIX, DENY
from tests.conftest import Tomo, wait_for
from tests.fakes import FakeSlack
from tests.interactions import feedback_payload, interact


def card_of(slack: FakeSlack) -> dict[str, Any]:
    """The approval card: the last post whose blocks hold Approve and Deny."""
    for post in reversed(slack.posts()):
        blocks = slack.blocks_of(post["channel"], post["ts"]) or []
        if any(block.get("type") == "actions" for block in blocks):
            return post | {"blocks": blocks}
    raise AssertionError("no approval card was posted")


def approval_id_of(card: dict[str, Any]) -> int:
    (actions,) = [b for b in card["blocks"] if b.get("type") == "actions"]
    assert actions["block_id"].startswith(BLOCK_PREFIX)
    values = {element["value"] for element in actions["elements"]}
    (value,) = values
    return int(value)


def click_payload(
    card: dict[str, Any], *, approve: bool, user: str = "U1", response_url: str
) -> dict[str, Any]:
    approval_id = approval_id_of(card)
    payload = feedback_payload(
        channel=card["channel"],
        message_ts=card["ts"],
        value="",
        user=user,
        thread_ts=card.get("thread_ts"),
    )
    payload["response_url"] = response_url
    payload["actions"] = [
        {
            "type": "button",
            "action_id": APPROVE if approve else DENY,
            "block_id": f"{BLOCK_PREFIX}{approval_id}",
            "text": {"type": "plain_text", "text": "Approve" if approve else "Deny", "emoji": True},
            "value": str(approval_id),
            "style": "primary" if approve else "danger",
            "action_ts": "1700000000.000300",
        }
    ]
    return payload


async def click(
    tomo: Tomo, card: dict[str, Any], *, approve: bool, response_url: str, user: str = "U1"
) -> httpx.Response:
    payload = click_payload(card, approve=approve, user=user, response_url=response_url)
    response = await interact(tomo, payload)
    assert response.status_code == 200, response.text
    return response


async def approval_state(tomo: Tomo, approval_id: int) -> str:
    rows = await tomo.rows("SELECT state FROM mcp_approval WHERE id = :id", id=approval_id)
    return str(rows[0]["state"])


async def wait_state(tomo: Tomo, approval_id: int, state: str) -> None:
    async def there() -> bool:
        return await approval_state(tomo, approval_id) == state

    await wait_for(there, timeout=60, what=f"approval {approval_id} {state}")


def card_updates(slack: FakeSlack, card: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in slack.calls_to("chat.update") if c.get("ts") == card["ts"]]


async def approval_timers(tomo: Tomo, n: int = 1) -> list[Timer]:
    """The approval timers, once there are `n`: the reply that asked sets them as its job ends,
    a moment after its post."""

    async def timers() -> list[Timer]:
        found = await tomo.timers("approval")
        return found if len(found) >= n else []

    await wait_for(timers, timeout=60, what=f"{n} approval timer(s)")
    return await tomo.timers("approval")
