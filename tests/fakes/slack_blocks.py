"""How FakeSlack checks a message's `blocks` (chat.postMessage, chat.stopStream, chat.update), or
refuses them.

Shapes from Slack's Block Kit reference (docs.slack.dev/reference/block-kit/blocks/
context-actions-block: `elements`, at most 5, of `feedback_buttons` or `icon_button`;
.../block-elements/feedback-buttons-element: `positive_button` and `negative_button`, each a
`plain_text` `text` and a `value`; .../blocks/section-block: `text` of at most 3,000
characters; .../blocks/markdown-block: `text` of standard markdown, at most 12,000
characters, as @slack/types' MarkdownBlock has it) as slack-sdk models and tests them
(slack_sdk/models/blocks/blocks.py ContextActionsBlock, block_elements.py
FeedbackButtonsElement; tests/slack_sdk/models/test_blocks.py). A message with blocks Slack
cannot read is answered `invalid_blocks` and not posted; `refuse_blocks()` answers that to
every message with blocks, as a workspace or a Slack that does not know the block does.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.slack_paging import SlackError

MAX_BLOCKS = 50
SECTION_TEXT_LIMIT = 3000
MARKDOWN_TEXT_LIMIT = 12_000
CONTEXT_ACTIONS_ELEMENTS = frozenset({"feedback_buttons", "icon_button"})


def checked_blocks(raw: object, *, refused: str | None) -> list[dict[str, Any]] | None:
    """The blocks a call carries (None: none), or SlackError as Slack answers them."""
    if raw is None or raw == "" or raw == []:
        return None
    if refused is not None:
        raise SlackError(refused)
    blocks = raw
    if isinstance(raw, str):  # form-encoded: a JSON string
        try:
            blocks = json.loads(raw)
        except ValueError:
            raise SlackError("invalid_blocks_format") from None
    if not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS:
        raise SlackError("invalid_blocks")
    for block in blocks:
        if not isinstance(block, dict) or not _valid(block):
            raise SlackError("invalid_blocks")
    return blocks


def _valid(block: dict[str, Any]) -> bool:
    kind = block.get("type")
    if kind == "section":
        text = block.get("text")
        return (
            isinstance(text, dict)
            and text.get("type") in ("mrkdwn", "plain_text")
            and isinstance(text.get("text"), str)
            and 0 < len(text["text"]) <= SECTION_TEXT_LIMIT
        )
    if kind == "markdown":
        text = block.get("text")
        return isinstance(text, str) and 0 < len(text) <= MARKDOWN_TEXT_LIMIT
    if kind == "context_actions":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= 5:
            return False
        return all(
            isinstance(e, dict) and e.get("type") in CONTEXT_ACTIONS_ELEMENTS and _element(e)
            for e in elements
        )
    return isinstance(kind, str) and bool(kind)  # other blocks: not checked here


def _element(element: dict[str, Any]) -> bool:
    if element.get("type") != "feedback_buttons":
        return True
    return all(_button(element.get(side)) for side in ("positive_button", "negative_button"))


def _button(button: object) -> bool:
    if not isinstance(button, dict):
        return False
    text = button.get("text")
    return (
        isinstance(text, dict)
        and text.get("type") == "plain_text"
        and bool(text.get("text"))
        and isinstance(button.get("value"), str)
        and bool(button["value"])
    )
