"""What Slack says about a conversation, written with the event that says it (on the ack
path, in the same commit as its event id), so that who may see what (app.gate.scopes)
follows Slack from the next tool call on, in every process:

- a channel made private or public (the `channel_convert_to_private` and
  `channel_convert_to_public` messages Slack posts in it: docs.slack.dev/reference/events/
  message/channel_convert_to_private and /channel_convert_to_public): `channel.is_private`;
- a channel shared with another organisation or no more (`channel_shared`,
  `channel_unshared`): `channel.is_ext_shared`;
- someone joining or leaving a conversation (`member_joined_channel`,
  `member_left_channel`), or its kind changing: a `conversation_change` row for the person
  and the conversation, so that what was learnt from Slack of their memberships before is
  asked again.

A fact is written only over an older one: the channel sync (app.context.directory), which
asks Slack for every channel, does not write back a state an event changed after it began.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import Channel, ConversationChange
from app.slack.events import ChannelShared, IncomingMessage

# A message subtype that changes what the channel is: is_private from then on.
CONVERSIONS = {"channel_convert_to_private": True, "channel_convert_to_public": False}


@dataclass(frozen=True)
class MembershipChanged:
    """A person (not tomo) joined or left a conversation."""

    channel: str
    user_id: str


def note_fact(connection: Connection, change: object, *, now: float) -> bool:
    """Record what `change` says of a conversation (False when it is no such change)."""
    if isinstance(change, ChannelShared):
        _channel(connection, change.channel, at=change.at or now, is_ext_shared=change.shared)
        changed(connection, [change.channel], now=now)
        return True
    if isinstance(change, MembershipChanged):
        changed(connection, [change.user_id, change.channel], now=now)
        return True
    return False


def note_conversions(
    connection: Connection, messages: Iterable[IncomingMessage], *, now: float
) -> None:
    """The channels these messages made private or public (each a message of CONVERSIONS)."""
    for message in messages:
        private = CONVERSIONS[message.subtype or ""]
        _channel(connection, message.channel, at=message.created_at, is_private=private)
        changed(connection, [message.channel], now=now)


def changed(connection: Connection, keys: list[str], *, now: float) -> None:
    """Note that what Slack said of these people's or conversations' members changed now."""
    rows = [{"key": key, "changed_at": now} for key in dict.fromkeys(keys)]
    statement = upsert(connection.dialect.name, ConversationChange)
    connection.execute(
        statement.on_conflict_do_update(index_elements=["key"], set_={"changed_at": now}), rows
    )


def _channel(connection: Connection, channel: str, *, at: float, **facts: Any) -> None:
    """Set facts of a channel known as of `at`, unless Slack said more lately (a channel
    tomo knows nothing else of yet gets a row of its own)."""
    statement = upsert(connection.dialect.name, Channel).values(id=channel, updated_at=at, **facts)
    connection.execute(
        statement.on_conflict_do_update(
            index_elements=["id"],
            set_={**facts, "updated_at": at},
            where=col(Channel.updated_at) <= at,
        )
    )
