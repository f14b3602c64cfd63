"""The approval card of a call to an MCP server's `approve` tool (docs/tools.md#approvals): who
may decide, the server, the tool, its arguments in full, and Approve and Deny buttons, in the
language of the message the reply answered (templates/approvals/).

Block Kit shapes from Slack's reference: a `section` of mrkdwn text (3,000 characters at most,
docs.slack.dev/reference/block-kit/blocks/section-block), an `actions` block
(.../blocks/actions-block) holding two `button` elements (.../block-elements/button-element:
`text` plain_text, `action_id`, `value`, `style` primary or danger). A click comes back to
POST /slack/interactions as a `block_actions` payload whose action has `type: "button"`, our
`action_id` and `block_id` and the button's `value`: the approval's id. Once decided the card is
rewritten (chat.update) without its buttons, saying what became of the call.
"""

from __future__ import annotations

import json
from functools import cache
from typing import TYPE_CHECKING, Any

from app.templates import TEMPLATES, jinja

if TYPE_CHECKING:
    from jinja2 import Environment

APPROVE = "tomo_mcp_approve"
DENY = "tomo_mcp_deny"
BLOCK_PREFIX = "tomo_mcp_approval:"  # + the approval's id
SECTION_CHARS = 2900  # of a section's 3,000, the code fence's backticks included
# Arguments longer than this are not asked about: they could not be shown in full.
MAX_ARGUMENTS_CHARS = 20 * SECTION_CHARS
LANGUAGES = ("en", "ja")


@cache
def _environment() -> Environment:
    return jinja(TEMPLATES / "approvals", autoescape=False)


def say(language: str, text: str, **values: Any) -> str:
    """One text of the card, in `language` (English when it is not one of LANGUAGES)."""
    chosen = language if language in LANGUAGES else "en"
    module = _environment().get_template(f"{chosen}.j2").module
    return str(getattr(module, text)(**values)).strip()


def shown_arguments(arguments: str) -> str:
    """The arguments as the card shows them: indented JSON (as written, when not JSON)."""
    try:
        return json.dumps(json.loads(arguments), ensure_ascii=False, indent=2)
    except ValueError:
        return arguments


def _escaped(text: str) -> str:
    """Shown as it is inside a code block: Slack's control characters escaped, so nothing in
    the arguments links, mentions or pings, and no ``` ends the block early."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("```", "`\u200b`\u200b`")


def card_blocks(
    *,
    approval_id: int,
    language: str,
    user: str,
    server: str,
    tool: str,
    arguments: str,
    status: str,
    buttons: bool,
) -> list[dict[str, Any]]:
    """The card: `status` is its last line (say(...)); `buttons` while it waits."""
    shown = _escaped(shown_arguments(arguments))
    pieces = [shown[i : i + SECTION_CHARS] for i in range(0, len(shown), SECTION_CHARS)] or [""]
    blocks = [_section(say(language, "heading", user=user, server=server, tool=tool))]
    blocks += [_section(f"```{piece or ' '}```") for piece in pieces]
    blocks.append(_section(status))
    if buttons:
        blocks.append(
            {
                "type": "actions",
                "block_id": f"{BLOCK_PREFIX}{approval_id}",
                "elements": [
                    _button(say(language, "approve_label"), APPROVE, approval_id, "primary"),
                    _button(say(language, "deny_label"), DENY, approval_id, "danger"),
                ],
            }
        )
    return blocks


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _button(label: str, action_id: str, approval_id: int, style: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": label, "emoji": True},
        "action_id": action_id,
        "value": str(approval_id),
        "style": style,
    }
