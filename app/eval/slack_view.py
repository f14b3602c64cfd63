"""A decision point as tomo's judgment sees it in Slack: the excerpt's messages as a channel's
top level, the stand-in's as tomo's own (its name mapped to the persona's, in names and in
text, everyone else's kept), the judgment made after the quiet wait a message of its kind gets.

Two ways of showing it (`VARIANTS`): `prefixed`, the messages as written, where IRC's leading
"nick:" and the Japanese chat's leading "@name" say whom a message is for; `bare`, those leading
addresses removed, as a Slack message that does not name its addressee reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.context.chat import split_channel
from app.db.models import Channel
from app.domain import ChatMessage, Context
from app.eval.points import Point

VARIANTS = ("prefixed", "bare")
SELF_ID = "UTOMO"
CHANNEL_ID = "CEVAL"


@dataclass(frozen=True)
class Waits:
    """The quiet before a judgment: MIN_WAIT_SECONDS for a conversation to join,
    FOLLOW_UP_WAIT_SECONDS for a follow-up."""

    join: float
    follow_up: float


def _leading_address(language: str, names: list[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    if language == "ja":
        return re.compile(rf"^\s*[@\uff20](?:{alternatives})\s*")
    return re.compile(rf"^\s*(?:{alternatives})\s*[:,]\s*", re.IGNORECASE)


def _renamed(text: str, *, language: str, stand_in: str, persona: str) -> str:
    if language == "ja":  # no spaces between words: every occurrence of the name
        return text.replace(stand_in, persona)
    return re.sub(
        rf"(?<![\w\-\[\]^`|]){re.escape(stand_in)}(?![\w\-\[\]^`|])", persona, text, flags=re.I
    )


def names_stand_in(point: Point) -> bool:
    """The newest message names the stand-in anywhere (what a bot answering only when named
    would go by)."""
    excerpt = point.excerpt
    text = excerpt.messages[point.index].text
    return (
        _renamed(text, language=excerpt.language, stand_in=excerpt.stand_in, persona="\0") != text
    )


def shown_text(point: Point, text: str, *, variant: str, persona: str) -> str:
    excerpt = point.excerpt
    if variant == "bare":
        people = sorted({line.user for line in excerpt.messages})
        text = _leading_address(excerpt.language, people).sub("", text, count=1) or text
    return _renamed(text, language=excerpt.language, stand_in=excerpt.stand_in, persona=persona)


def point_context(
    point: Point, *, variant: str, persona_name: str, persona_prompt: str, waits: Waits
) -> Context:
    """The Context a judgment of this point is rendered from (app.conversation.judgment.service)."""
    excerpt = point.excerpt
    people = sorted({line.user for line in excerpt.messages} - {excerpt.stand_in})
    ids = {name: f"U{number:03d}" for number, name in enumerate(people, start=1)}
    shown = point.shown()
    messages = []
    for number, line in enumerate(shown):
        own = line.user == excerpt.stand_in
        messages.append(
            ChatMessage(
                # Minutes are all the IRC logs give: a message's place keeps the order.
                ts=f"{line.at + number / 1000:.6f}",
                thread_ts="",
                user_id=SELF_ID if own else ids[line.user],
                author=persona_name if own else line.user,
                text=shown_text(point, line.text, variant=variant, persona=persona_name),
                created_at=line.at,
                from_self=own,
            )
        )
    wait = waits.follow_up if point.kind == "follow_up" else waits.join
    channel = Channel(id=CHANNEL_ID, name=excerpt.channel)
    return Context(
        persona_name=persona_name,
        persona_prompt=persona_prompt,
        conversation_history=split_channel(channel, messages),
        now=shown[-1].at + wait,
        target_thread_ts=None,
    )
