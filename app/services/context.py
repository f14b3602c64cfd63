"""The one context builder that judgment, reply and memory all use.

It costs a fixed number of queries whatever the number of channels: memories, the channels
they name, the channel's recent messages, the target thread, and the names of the people who
appear. What it reads is bounded too: CHANNEL_MESSAGES_LIMIT messages, and memories within
the budget of app.services.recall.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import aliased
from sqlmodel import and_, case, col, func, or_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.models import Channel, Memory, Message, Person
from app.domain import ChannelMessages, ChatMessage, Context
from app.services.recall import CHANNEL_MEMORY_LIMIT, THREAD_MEMORY_LIMIT, recall

TARGET_THREAD_LIMIT = 200


@dataclass(frozen=True)
class Persona:
    name: str
    prompt: str


@dataclass(frozen=True)
class Self:
    user_id: str | None
    bot_id: str | None

    def wrote(self, row: Message) -> bool:
        return bool(
            (self.user_id and row.user_id == self.user_id)
            or (self.bot_id and row.bot_id == self.bot_id)
        )


def display_name(person: Person | None, user_id: str | None) -> str:
    if person is not None:
        return person.display_name or person.real_name or person.name or person.id
    return user_id or "unknown"


def to_chat(rows: Iterable[Message], people: dict[str, Person], me: Self) -> list[ChatMessage]:
    return [
        ChatMessage(
            ts=row.ts,
            thread_ts=row.thread_ts,
            user_id=row.user_id,
            author=display_name(people.get(row.user_id or ""), row.user_id or row.bot_id),
            text=row.text,
            created_at=row.created_at,
            from_self=me.wrote(row),
            from_bot=bool(row.bot_id) or not row.user_id,
            edited=row.edited_at is not None,
        )
        for row in rows
    ]


def split_channel(
    channel: Channel,
    messages: Sequence[ChatMessage],
    target: Sequence[ChatMessage] = (),
    *,
    target_thread_ts: str = "",
) -> ChannelMessages:
    """Top-level messages and threads (parent first) from a flat list; the target thread's
    messages are merged in whole so the conversation at hand is never cut off."""
    by_ts = {m.ts: m for m in (*messages, *target)}
    ordered = sorted(by_ts.values(), key=lambda m: float(m.ts))
    top = tuple(m for m in ordered if not m.thread_ts)
    threads: dict[str, list[ChatMessage]] = {target_thread_ts: []} if target_thread_ts else {}
    for message in ordered:
        if message.thread_ts:
            threads.setdefault(message.thread_ts, []).append(message)
    thread_messages = {}
    for thread_ts, replies in threads.items():
        parent = by_ts.get(thread_ts)
        thread_messages[thread_ts] = ((parent,) if parent else ()) + tuple(replies)
    return ChannelMessages(channel.id, channel.name or channel.id, top, thread_messages)


class ContextBuilder:
    def __init__(
        self,
        *,
        persona: Persona,
        channel_messages_limit: int,
        thread_memory_days: float,
        active_channel_days: float,
    ) -> None:
        self._persona = persona
        self._limit = channel_messages_limit
        self._thread_days = thread_memory_days
        self._active_days = active_channel_days

    async def build(
        self,
        session: AsyncSession,
        *,
        channel_id: str,
        thread_ts: str,
        me: Self,
        now: float | None = None,
    ) -> Context:
        now = time.time() if now is None else now
        memories = await self._memories(session, channel_id=channel_id, now=now)
        wanted = {channel_id} | {m.scope_id for m in memories if m.scope == "channel"}
        channels = {
            c.id: c
            for c in (await session.exec(select(Channel).where(Channel.id.in_(wanted)))).all()  # type: ignore[call-overload,attr-defined]
        }
        channel = channels.get(channel_id) or Channel(id=channel_id, name=channel_id)
        recent = (
            await session.exec(  # type: ignore[call-overload]
                select(Message)
                .where(Message.channel == channel_id, Message.deleted == False)  # noqa: E712
                .order_by(Message.ts.desc())  # type: ignore[attr-defined]
                .limit(self._limit)
            )
        ).all()
        target_rows: Sequence[Message] = ()
        if thread_ts:
            target_rows = (
                await session.exec(  # type: ignore[call-overload]
                    select(Message)
                    .where(Message.deleted == False)  # noqa: E712
                    # Each branch names the channel so both use an index (ix_message_thread,
                    # the primary key); `channel = ? AND (a OR b)` scans the whole channel.
                    .where(
                        or_(
                            (Message.channel == channel_id) & (Message.thread_ts == thread_ts),
                            (Message.channel == channel_id) & (Message.ts == thread_ts),
                        )
                    )
                    .order_by(Message.ts.desc())  # type: ignore[attr-defined]
                    .limit(TARGET_THREAD_LIMIT)
                )
            ).all()
        user_ids = {r.user_id for r in (*recent, *target_rows) if r.user_id}
        people = await load_people(session, user_ids)

        conversation = split_channel(
            channel,
            to_chat(recent, people, me),
            to_chat(target_rows, people, me),
            target_thread_ts=thread_ts,
        )
        recalled = recall(memories, channel_id=channel_id, channels=channels)
        return Context(
            persona_name=self._persona.name,
            persona_prompt=self._persona.prompt,
            conversation_history=conversation,
            now=now,
            target_thread_ts=thread_ts or None,
            workspace_long_term_memory=recalled.workspace.get("long_term"),
            workspace_short_term_memory=recalled.workspace.get("short_term"),
            channel_memories=recalled.channels,
            thread_memories=recalled.threads,
        )

    async def _memories(
        self, session: AsyncSession, *, channel_id: str, now: float
    ) -> Sequence[Memory]:
        """The memories a prompt may use, most wanted first, in one query and a bounded number
        of rows: the workspace's, this channel's, its recent threads', then those of public
        channels active lately, the most recent first."""
        active_since = f"{now - self._active_days * 86400:.6f}"
        thread_since = f"{now - self._thread_days * 86400:.6f}"
        public = select(Channel.id).where(
            col(Channel.is_private).is_(False), col(Channel.is_im).is_(False)
        )
        scope, scope_id, source_ts = col(Memory.scope), col(Memory.scope_id), col(Memory.source_ts)
        here = and_(scope == "channel", scope_id == channel_id)
        rank = case((scope == "workspace", 0), (here, 1), (scope == "thread", 2), else_=3)
        position = func.row_number().over(partition_by=rank, order_by=source_ts.desc())
        ranked = (
            select(Memory, rank.label("rank"), position.label("position"))
            .where(
                or_(
                    scope == "workspace",
                    here,
                    and_(scope == "channel", source_ts >= active_since, scope_id.in_(public)),
                    and_(
                        scope == "thread",
                        scope_id.startswith(f"{channel_id}:", autoescape=True),
                        source_ts >= thread_since,
                    ),
                )
            )
            .subquery()
        )
        row = aliased(Memory, ranked)
        most = case((ranked.c.rank == 2, THREAD_MEMORY_LIMIT), else_=2 * CHANNEL_MEMORY_LIMIT)
        statement = (
            select(row)
            .where(ranked.c.position <= most)
            .order_by(ranked.c.rank, ranked.c.source_ts.desc())
        )
        return (await session.exec(statement)).all()  # type: ignore[call-overload]


async def load_people(session: AsyncSession, user_ids: set[str]) -> dict[str, Person]:
    if not user_ids:
        return {}
    rows = await session.exec(select(Person).where(Person.id.in_(user_ids)))  # type: ignore[call-overload,attr-defined]
    return {p.id: p for p in rows.all()}
