"""Slack's feedback buttons under a reply (docs/how-tomo-works.md#feedback): a `context_actions`
block holding one `feedback_buttons` element, whose clicks come back to
POST /slack/interactions as `block_actions`.

The shape is Slack's Block Kit reference (docs.slack.dev/reference/block-kit/blocks/
context-actions-block, .../block-elements/feedback-buttons-element), as slack-sdk builds and
tests it (slack_sdk/models/blocks: ContextActionsBlock, FeedbackButtonsElement;
tests/slack_sdk/models/test_blocks.py, tests/slack_sdk_async/web/test_async_chat_stream.py).

A message posted whole shows its blocks instead of its text, so its text goes first as
section blocks of mrkdwn (3,000 characters each at most); `text` stays the notification's. A
streamed message finished by chat.update, which takes no `markdown_text` beside blocks, keeps
its markdown in Slack's `markdown` block (docs.slack.dev/reference/block-kit/blocks/
markdown-block: standard markdown, 12,000 characters; @slack/types' MarkdownBlock).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from app.slack.mrkdwn import split_message
from app.slack.web.errors import SlackError

logger = logging.getLogger(__name__)

T = TypeVar("T")
Blocks = list[dict[str, Any]]

ACTION_ID = "tomo_feedback"
BLOCK_PREFIX = "tomo_feedback:"  # + the reply claim's id: which reply a click was given to
POSITIVE, NEGATIVE = "positive", "negative"
SECTION_LIMIT = 3000  # a section block's text
# Slack's answers that refuse a message's blocks (chat.postMessage, chat.stopStream,
# chat.update): nothing was posted or changed, and the call is made again without them.
REFUSALS = frozenset({"invalid_blocks", "invalid_blocks_format", "msg_blocks_too_long"})
_BLOCK_ID = re.compile(re.escape(BLOCK_PREFIX) + r"([0-9]{1,18})")


def feedback_block(claim_id: int) -> dict[str, Any]:
    def button(text: str, value: str) -> dict[str, Any]:
        return {"text": {"type": "plain_text", "text": text, "emoji": True}, "value": value}

    return {
        "type": "context_actions",
        "block_id": f"{BLOCK_PREFIX}{claim_id}",
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": ACTION_ID,
                "positive_button": button("👍", POSITIVE),
                "negative_button": button("👎", NEGATIVE),
            }
        ],
    }


def text_blocks(text: str) -> Blocks:
    """`text` (Slack mrkdwn) as section blocks, so the message reads as its text does."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": part}}
        for part in split_message(text, limit=SECTION_LIMIT)
    ]


def markdown_block(text: str) -> dict[str, Any]:
    """`text` (standard markdown, as a stream writes it) as Slack renders a streamed message."""
    return {"type": "markdown", "text": text}


def claim_of_block(block_id: object) -> int | None:
    """The reply claim a feedback block names; None for any other block."""
    if not isinstance(block_id, str):
        return None
    found = _BLOCK_ID.fullmatch(block_id)
    return int(found.group(1)) if found else None


class FeedbackButtons:
    """Whether replies get the buttons: until Slack refuses them once (then never again in
    this process, logged once)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled

    def for_post(self, claim_id: int, text: str) -> Blocks | None:
        if not self.enabled:
            return None
        return [*text_blocks(text), feedback_block(claim_id)]

    def for_stop(self, claim_id: int) -> Blocks | None:
        return [feedback_block(claim_id)] if self.enabled else None

    def for_rewrite(self, claim_id: int, text: str) -> Blocks | None:
        """A streamed message given its whole `text` by chat.update: the text as a markdown
        block, then the buttons."""
        if not self.enabled:
            return None
        return [markdown_block(text), feedback_block(claim_id)]

    async def sent(self, blocks: Blocks | None, send: Callable[[Blocks | None], Awaitable[T]]) -> T:
        """`send(blocks)`, and once more without the blocks when Slack refused them."""
        while True:
            try:
                return await send(blocks)
            except SlackError as error:
                if blocks is None or not self.refused(error):
                    raise
                blocks = None

    def refused(self, error: SlackError) -> bool:
        """Whether `error` refuses the blocks; if so, replies go without them from now."""
        if error.uncertain or error.error not in REFUSALS:
            return False
        if self.enabled:
            logger.warning(
                "Slack refused the feedback buttons (%s): replies are posted without them", error
            )
        self.enabled = False
        return True
