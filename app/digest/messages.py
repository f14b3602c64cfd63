"""What a digest sums up: the messages people wrote in one channel during its period, from what
tomo stored of that channel alone — so only what the channel's readers can read, and nothing
the retention, a `/tomo forget` or Slack's deletions took away (those rows are gone; messages
written before a forget or older than the retention are left out here too). Not tomo's, not
other bots'.

Grouped by conversation (a thread; the channel's top level), the conversations in the order
they began, and numbered in that order from 1: the model cites a message as `[n]`, and tomo
makes the link from the number (app.digest.links), so no link can be invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col

from app.context.builder import people_by_id
from app.context.chat import to_chat
from app.db.models import PEOPLES_MESSAGES, ChannelControl, Message
from app.slack.identity import Me
from app.slack.permalinks import permalink

MAX_MESSAGES = 5000  # a period's newest messages at most (a weekly digest of a busy channel)
MESSAGE_CHARS = 600  # of each message's text

_M = Message.__table__.c  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Numbered:
    number: int
    ts: str
    thread_ts: str
    author: str
    text: str
    created_at: float
    link: str | None  # its permalink; None while tomo does not know its workspace's url


@dataclass
class Conversation:
    thread_ts: str  # "" for the channel's top level
    messages: list[Numbered] = field(default_factory=list)


@dataclass(frozen=True)
class Period:
    conversations: list[Conversation]

    @property
    def messages(self) -> list[Numbered]:
        return [m for c in self.conversations for m in c.messages]

    @property
    def links(self) -> dict[int, str]:
        return {m.number: m.link for m in self.messages if m.link}


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


async def period_messages(
    connection: AsyncConnection,
    *,
    channel: str,
    since: float,
    until: float,
    me: Me,
    workspace_url: str | None,
    kept_since: float | None = None,
) -> Period:
    """People's messages in `channel` written in [since, until), numbered by conversation.
    `kept_since`: the retention's start (older rows may not have been purged yet)."""
    forgotten = await connection.execute(
        select(col(ChannelControl.forgotten_at)).where(col(ChannelControl.channel) == channel)
    )
    start = max(since, kept_since or 0.0, forgotten.scalar_one_or_none() or 0.0)
    # Through the index of people's messages (channel, ts): its condition written as it is.
    rows = (
        await connection.execute(
            select(_M)
            .where(_M.channel == channel, _M.ts >= f"{start:.6f}", _M.ts < f"{until:.6f}")
            .where(text(PEOPLES_MESSAGES))
            .order_by(_M.ts.desc())
            .limit(MAX_MESSAGES)
        )
    ).all()
    people = await connection.run_sync(
        lambda sync: people_by_id(sync, {r.user_id for r in rows if r.user_id})
    )
    chat = [
        m
        for m in to_chat(cast(Sequence[Message], reversed(rows)), people, me)
        if not m.from_self and not m.from_bot and m.text.strip()
    ]
    return _numbered(chat, channel=channel, workspace_url=workspace_url)


def _numbered(chat: Sequence[Any], *, channel: str, workspace_url: str | None) -> Period:
    parents = {m.thread_ts for m in chat if m.thread_ts}
    groups: dict[str, Conversation] = {}
    for message in sorted(chat, key=lambda m: float(m.ts)):
        key = message.thread_ts or (message.ts if message.ts in parents else "")
        groups.setdefault(key, Conversation(thread_ts=key)).messages.append(message)
    number = 0
    conversations = []
    for group in groups.values():  # in the order each began
        numbered = []
        for message in group.messages:
            number += 1
            link = None
            if workspace_url:
                link = permalink(
                    workspace_url, channel=channel, ts=message.ts, thread_ts=message.thread_ts
                )
            numbered.append(
                Numbered(
                    number=number,
                    ts=message.ts,
                    thread_ts=message.thread_ts,
                    author=message.author,
                    text=_clip(message.text),
                    created_at=message.created_at,
                    link=link,
                )
            )
        conversations.append(Conversation(thread_ts=group.thread_ts, messages=numbered))
    return Period(conversations)
