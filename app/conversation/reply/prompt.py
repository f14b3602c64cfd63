"""A reply's prompt (docs/how-tomo-works.md#reply): the system message, the conversation as
turns ending with the message answered, the current time last."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.context.builder import window
from app.domain import ChatMessage, Context
from app.llm import with_images
from app.llm.prompts import render, render_parts


@dataclass(frozen=True)
class Turns:
    """Which messages a reply's prompt shows as turns (turn_messages)."""

    trigger_ts: str  # the message answered, the last turn
    limit: int  # how many messages before it, at most
    threaded: bool  # a thread (its parent first), else a channel's top level or a DM
    # The newest message an earlier reply's prompt held (app.conversation.answered): tomo's
    # posts after the trigger, written while it came, follow the messages that reply held.
    answered_ts: str = ""
    mine: frozenset[str] = frozenset()  # this reply's own messages (written again): not shown


def turn_messages(messages: tuple[ChatMessage, ...], shown: Turns) -> list[ChatMessage]:
    """The messages a reply shows as turns, oldest first, ending with the message answered: a
    thread's parent, then the `limit` most recent messages before the trigger, then the trigger
    (at a top level or in a DM, the most recent of at most `limit`, from a block boundary).
    tomo's posts made after the trigger by an earlier reply come right after what that reply
    held, so the message that came while tomo wrote is answered after what tomo said."""
    trigger, limit = float(shown.trigger_ts), shown.limit
    before = [m for m in messages if float(m.ts) < trigger]
    if shown.answered_ts:
        meanwhile = [
            m for m in messages if m.from_self and float(m.ts) > trigger and m.ts not in shown.mine
        ]
        cut = sum(1 for m in before if float(m.ts) <= float(shown.answered_ts))
        before = before[:cut] + meanwhile + before[cut:]
    answered = [m for m in messages if m.ts == shown.trigger_ts]
    parent: list[ChatMessage] = []
    if shown.threaded and before and not before[0].thread_ts:
        parent, before = before[:1], before[1:]
    if shown.threaded:
        return parent + before[-limit:] + answered
    # A channel's top level or a DM: its start moves on by whole blocks (a cacheable prefix).
    return before[len(before) - window(len(before), limit, blocks=2) :] + answered


def conversation_turns(messages: tuple[ChatMessage, ...], shown: Turns) -> list[dict[str, Any]]:
    """The conversation as chat turns (turn_messages): tomo's own messages are the
    assistant's, everyone else's start with <@USER_ID>."""
    turns: list[dict[str, Any]] = []
    for message in turn_messages(messages, shown):
        if message.from_self:
            turns.append({"role": "assistant", "content": message.text})
            continue
        said = message.said()
        if message.images:  # the message's images, for a model that sees them
            turns.append({"role": "user", "content": with_images(said, message.images)})
        else:
            turns.append({"role": "user", "content": said})
    return turns


def reply_messages(context: Context, shown: Turns) -> list[dict[str, Any]]:
    """The reply's prompt: the system message (what stays the same from one reply to the
    next), the conversation as turns, and last the current time, so that consecutive replies
    share everything but their newest turns and the time (a prefix providers can cache)."""
    system, now = render_parts("reply.j2", context=context)
    return [
        {"role": "system", "content": system},
        *lead_in_images(context),
        *conversation_turns(context.target_turns(), shown),
        {"role": "system", "content": now},
    ]


def lead_in_images(context: Context) -> list[dict[str, Any]]:
    """A user message with the images of the messages just before the conversation (a
    mention asking about the screenshot posted before it), oldest first; none when they
    carry no images the model sees (app.files.reader chose them)."""
    shown = [m for m in context.lead_in() if m.images]
    if not shown:
        return []
    parts = [{"type": "text", "text": render("lead_in.j2", channel_name=context.channel_name)}]
    for message in shown:
        parts += with_images(message.said(), message.images)
    return [{"role": "user", "content": parts}]
