"""Posting and rewriting an approval's card in Slack (app.slack.interactive.approval_blocks
shapes it): posted once when the model asks for the call, rewritten without its buttons once
decided, expired or called. A rewrite Slack refuses is logged; the decision stands in the
database all the same."""

from __future__ import annotations

import logging
import math

from app.db.models.mcp import McpApproval
from app.slack.interactive.approval_blocks import card_blocks, say
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError

logger = logging.getLogger(__name__)


def minutes(approval: McpApproval) -> int:
    return max(1, math.ceil((approval.expires_at - approval.created_at) / 60))


def status_line(approval: McpApproval, status: str) -> str:
    """waiting, approved, called, call_failed, cut_short, denied or expired, as the card
    says it."""
    if status in ("waiting",):
        return say(approval.language, status, user=approval.user_id, minutes=minutes(approval))
    if status == "expired":
        return say(approval.language, status, minutes=minutes(approval))
    return say(approval.language, status, user=approval.decided_by or approval.user_id)


def _blocks(approval: McpApproval, status: str) -> list[dict[str, object]]:
    assert approval.id is not None
    return card_blocks(
        approval_id=approval.id,
        language=approval.language,
        user=approval.user_id,
        server=approval.server,
        tool=approval.tool,
        arguments=approval.arguments,
        status=status_line(approval, status),
        buttons=status == "waiting",
    )


async def post_card(slack: SlackClient, approval: McpApproval) -> str:
    """Post the waiting card in the reply's thread; its ts (SlackError: not posted, or unsure)."""
    heading = say(
        approval.language,
        "heading",
        user=approval.user_id,
        server=approval.server,
        tool=approval.tool,
    )
    return await slack.post_message(
        channel=approval.channel,
        text=heading,
        thread_ts=approval.reply_thread_ts or None,
        blocks=_blocks(approval, "waiting"),
    )


async def update_card(slack: SlackClient, approval: McpApproval, status: str) -> None:
    if not approval.card_ts:
        return
    try:
        await slack.update_message(
            channel=approval.channel,
            ts=approval.card_ts,
            text=status_line(approval, status),
            blocks=_blocks(approval, status),
        )
    except SlackError as error:
        logger.warning("the approval card %s was not updated: %s", approval.card_ts, error)
