"""What the message tools share: finding the conversation a tool was asked about, within what
the reader may see, and showing stored messages to the model (where, when, who, what, and
the link to each).

A conversation the reader may not see and one that does not exist give the same answer, so
a tool never tells anyone that a private channel is there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.context.chat import author_id, to_chat
from app.db.models import Channel, Message, Person
from app.domain import ChatMessage
from app.gate.scope import Scope
from app.retention.batches import table_of
from app.slack.identity import Me
from app.slack.permalinks import permalink

_CHANNELS = table_of(Channel).c
# Slack's channel mention, "<#C123|general>" or "<#C123>", as a model may copy it.
_MENTION = re.compile(r"<#([A-Za-z0-9_-]{1,32})(?:\|[^>]*)?>").fullmatch


async def visible_channel(
    connection: AsyncConnection, scope: Scope, asked: str
) -> dict[str, Any] | None:
    """The conversation `asked` names (its id; a name with or without "#"; Slack's `<#C…>`)
    when the reader may see it; None when they may not, or when there is none."""
    asked = asked.strip()
    mention = _MENTION(asked)
    key = mention.group(1) if mention else asked.removeprefix("#").strip()
    if not key:
        return None
    rows = (
        await connection.execute(
            select(table_of(Channel)).where(
                or_(_CHANNELS.id == key, func.lower(_CHANNELS.name) == key.lower())
            )
        )
    ).all()
    # An id first, then a name; a name that two conversations share: one the reader may see.
    for row in sorted(rows, key=lambda r: r.id != key):
        if scope.allows(row.id, public=not row.is_private and not row.is_im):
            return dict(row._mapping)
    return None


async def named(
    connection: AsyncConnection, rows: Sequence[Any], me: Me
) -> tuple[list[tuple[str, ChatMessage]], dict[str, dict[str, Any]]]:
    """Each row's conversation and the row as a ChatMessage, with its author's name
    (app.context.chat; a row whose ts is no Slack timestamp is left out), and the
    conversations they are in, by id."""
    authors = {a for r in rows if (a := author_id(r))}
    people = cast(dict[str, Person], await _by_id(connection, Person, authors))
    channels = await _by_id(connection, Channel, {r.channel for r in rows})
    chat = [
        (row.channel, message)
        for row in rows
        for message in to_chat(cast(Iterable[Message], [row]), people, me)
    ]
    return chat, {key: dict(row._mapping) for key, row in channels.items()}


async def _by_id(connection: AsyncConnection, model: type, ids: set[str]) -> dict[str, Any]:
    if not ids:
        return {}
    table = table_of(model)
    found = await connection.execute(select(table).where(table.c.id.in_(sorted(ids))))
    return {row.id: row for row in found}


def place(channel: dict[str, Any] | None, channel_id: str, *, here: str) -> str:
    """Where a message was written, as the model reads it."""
    if channel_id == here:
        return "this conversation"
    if channel is None:
        return channel_id
    if channel["is_im"]:
        return "a DM"
    return f"#{channel['name'] or channel_id}"


def when(created_at: float) -> str:
    return datetime.fromtimestamp(created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def clip(text: str, most: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


def link(url: str | None, *, channel: str, message: ChatMessage) -> str | None:
    """The message's permalink; None until auth.test has told tomo its workspace's url."""
    if not url:
        return None
    return permalink(url, channel=channel, ts=message.ts, thread_ts=message.thread_ts)
