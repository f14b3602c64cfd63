"""What kind of message a Slack message is, and whether a person wrote it (docs/how-tomo-works.md:
#recording, #routing).

- conversational: someone said something (no subtype, `thread_broadcast`, `file_share`,
  `me_message`, and a bot's `bot_message`). Only these can be a conversation's turns, its
  newest message, or the message answered.
- system: Slack's own notes in the conversation (joins, leaves, topic, purpose, pins, huddle
  posts, reminders being set, ...): recorded, shown in prompts as labelled notes at most,
  never a trigger, never the newest message of a conversation.
- hidden (`hidden: true`): not a new message at all (`message_replied`, a tombstone's own
  copy, ...); it changes nothing. Edits and deletions carry `hidden` too and are read as such
  before this kind is asked.

Who wrote it is the other half: a person, or not one (a bot: `bot_id`, `bot_message`, no
user, Slackbot, or a user whose users.info says `is_bot`). Not-a-person messages are record
only: they never trigger and are never answered.
"""

from __future__ import annotations

from collections.abc import Container
from enum import StrEnum
from typing import Any


class MessageKind(StrEnum):
    CONVERSATIONAL = "conversational"
    SYSTEM = "system"
    HIDDEN = "hidden"


SLACKBOT = "USLACKBOT"
BOT_SUBTYPES = frozenset({"bot_message"})
CONVERSATIONAL_SUBTYPES = frozenset(
    {None, "file_share", "thread_broadcast", "me_message", *BOT_SUBTYPES}
)
TOMBSTONE = "tombstone"  # the placeholder left where a thread's parent was deleted
NO_BOTS: frozenset[str] = frozenset()


def is_hidden(raw: dict[str, Any]) -> bool:
    return raw.get("hidden") is True or raw.get("subtype") == TOMBSTONE


def subtype_kind(subtype: str | None) -> MessageKind:
    """The kind of a message that is not hidden."""
    if subtype is None or subtype in CONVERSATIONAL_SUBTYPES:
        return MessageKind.CONVERSATIONAL
    return MessageKind.SYSTEM


def subtype_of(raw: dict[str, Any]) -> str | None:
    """The message's subtype; "?" for one that is no string (it reads as a system message)."""
    subtype = raw.get("subtype")
    return subtype if subtype is None or isinstance(subtype, str) else "?"


def message_kind(raw: dict[str, Any]) -> MessageKind:
    if is_hidden(raw):
        return MessageKind.HIDDEN
    return subtype_kind(subtype_of(raw))


def is_person(
    *,
    user_id: str | None,
    bot_id: str | None,
    subtype: str | None,
    bot_users: Container[str] = NO_BOTS,
) -> bool:
    """Whether a person wrote it; `bot_users` are the users.info `is_bot` users known so far."""
    return bool(
        user_id
        and not bot_id
        and subtype not in BOT_SUBTYPES
        and user_id != SLACKBOT
        and user_id not in bot_users
    )
