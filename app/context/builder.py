"""The one context builder that judgment, reply and memory all use.

A prompt obeys the rule a tool obeys (app.gate.scope): what it recalls of other conversations
is what everyone reading the conversation may see, the conversation's scope taken from the
gate (app.gate.scopes) before anything is read. Where a guest or a person of another
organisation reads (a Slack Connect channel, a DM with an outsider, any conversation such a
person is in) the prompt holds that conversation alone: no workspace memory, no other
channel's memory, no workspace note; in a guest's DM, only what the guest's channels allow.
An ordinary conversation's prompt is unchanged by it.

It costs a fixed number of queries whatever the number of channels: the scope's (one read of
the conversation's facts, one of who its people are: app.gate.scopes), memories, the channels
they name, the channel's recent messages, the target thread, the names of the people who
appear, the notes it may see (app.context.notes) and the channel's standing instructions
(app.context.instructions). What it reads is bounded too:
CHANNEL_MESSAGES_LIMIT messages, memories within the budget of app.context.memories, and a few
dozen notes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection, Engine
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.chat import author_id, split_channel, to_chat
from app.context.instructions import instructions_text
from app.context.memories import recall
from app.context.notes import for_prompt as notes_for_prompt
from app.context.statements import (
    CHANNELS_NAMED,
    MEMORIES_RECALLED,
    PEOPLE_NAMED,
    RECENT,
    TARGET_THREAD,
    like_prefix,
)
from app.db.models import Channel, Memory, Message, Person
from app.domain import Context, NoteLine
from app.gate.scope import Scope
from app.slack.identity import Me

# Looks up a channel's and people's names and waits for them (Directory.learn).
Learn = Callable[..., Awaitable[None]]


class ConversationScopes(Protocol):
    """Where a conversation's scope comes from: the gate (app.gate.scopes.Scopes)."""

    async def for_conversation(self, channel: str) -> Scope: ...


@dataclass(frozen=True)
class Persona:
    name: str
    prompt: str


def window(total: int, limit: int, *, blocks: int = 4) -> int:
    """How many of the newest of `total` messages a prompt shows: at most `limit`, the oldest
    one shown moving on only by whole blocks (`limit` / `blocks`) as messages arrive, so that
    consecutive prompts keep the same start (a prefix providers can cache)."""
    if total <= limit:
        return total
    block = max(1, limit // blocks)
    start = -(-(total - limit) // block) * block  # the first block boundary leaving <= limit
    return total - start


@dataclass(frozen=True)
class _Rows:
    """What a context is built from, read in one go (Core rows with the models' fields)."""

    memories: Sequence[Memory]
    channels: dict[str, Channel]
    recent: Sequence[Message]
    target: Sequence[Message]
    people: dict[str, Person]
    notes: tuple[NoteLine, ...]
    instructions: str | None


class ContextBuilder:
    def __init__(
        self,
        *,
        persona: Persona,
        channel_messages_limit: int,
        thread_memory_days: float,
        active_channel_days: float,
        scopes: ConversationScopes,
        reader: Engine | None = None,
        learn: Learn | None = None,
    ) -> None:
        """`reader`: a synchronous engine on the same SQLite file (app.db.engine.sqlite_reader);
        the five statements then run together on a thread instead of through the session.
        `learn`: looks up the channel and the people a context would show without a name
        (app.context.directory), so that every author and channel in a prompt has its name
        (docs/how-tomo-works.md#recording); without it a context shows what the directory holds.
        `scopes`: the gate that says what the conversation's prompt may recall."""
        self._persona = persona
        self._scopes = scopes
        self._learn = learn
        self._limit = channel_messages_limit
        self._thread_days = thread_memory_days
        self._active_days = active_channel_days
        self.reader = reader

    def close(self) -> None:
        if self.reader is not None:
            self.reader.dispose()

    async def build(
        self,
        session: AsyncSession,
        *,
        channel_id: str,
        thread_ts: str,
        me: Me,
        now: float | None = None,
    ) -> Context:
        scope = await self._scopes.for_conversation(channel_id)
        context = await self._build(session, scope, thread_ts, me, now)
        if self._learn is None or (not context.unnamed_people and context.channel_known):
            return context
        # The lookups wait for Slack, then for a connection of their own to store the names:
        # the session lets go of its connection meanwhile (it takes one again to read), so
        # jobs running at once never hold every connection while each waits for another.
        await session.close()
        await self._learn(
            channel=None if context.channel_known else channel_id, people=context.unnamed_people
        )
        if not context.channel_known:  # what it is (a DM's person, say) is known now
            scope = await self._scopes.for_conversation(channel_id)
        return await self._build(session, scope, thread_ts, me, now)

    async def _build(
        self, session: AsyncSession, scope: Scope, thread_ts: str, me: Me, now: float | None
    ) -> Context:
        now = time.time() if now is None else now
        channel_id = scope.conversation
        if self.reader is not None:
            rows = await asyncio.to_thread(self._read, scope, thread_ts, now)
        else:
            rows = await session.run_sync(
                lambda sync: self._fetch(sync.connection(), scope, thread_ts, now)
            )
        channel = rows.channels.get(channel_id) or Channel(id=channel_id, name=channel_id)
        conversation = split_channel(
            channel,
            to_chat(rows.recent, rows.people, me),
            to_chat(rows.target, rows.people, me),
            target_thread_ts=thread_ts,
        )
        recalled = recall(rows.memories, channel_id=channel_id, channels=rows.channels)
        authors = {author_id(r) for r in (*rows.recent, *rows.target)} - {None}
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
            notes=rows.notes,
            channel_instructions=rows.instructions,
            unnamed_people=frozenset(a for a in authors if a and a not in rows.people),
            channel_known=channel_id in rows.channels,
        )

    def _read(self, scope: Scope, thread_ts: str, now: float) -> _Rows:
        assert self.reader is not None
        with self.reader.connect() as connection:
            return self._fetch(connection, scope, thread_ts, now)

    def _fetch(self, connection: Connection, scope: Scope, thread_ts: str, now: float) -> _Rows:
        channel_id = scope.conversation
        memories: Sequence[Memory] = connection.execute(
            MEMORIES_RECALLED,
            {
                "channel": channel_id,
                "active_since": f"{now - self._active_days * 86400:.6f}",
                "thread_since": f"{now - self._thread_days * 86400:.6f}",
                "threads_like": like_prefix(f"{channel_id}:"),
                **scope.bound(),
            },
        ).all()  # type: ignore[assignment]
        wanted = {channel_id} | {m.scope_id for m in memories if m.scope == "channel"}
        found = connection.execute(CHANNELS_NAMED, {"ids": sorted(wanted)})
        rows = connection.execute(RECENT, {"channel": channel_id, "limit": self._limit}).all()
        recent: Sequence[Message] = rows[: window(rows[0].total, self._limit)] if rows else ()  # type: ignore[assignment]
        target: Sequence[Message] = ()
        if thread_ts:
            target = connection.execute(
                TARGET_THREAD, {"channel": channel_id, "thread": thread_ts}
            ).all()  # type: ignore[assignment]
        user_ids = {a for r in (*recent, *target) if (a := author_id(r))}
        return _Rows(
            memories=memories,
            channels={c.id: c for c in found.all()},  # type: ignore[misc]
            recent=recent,
            target=target,
            people=people_by_id(connection, user_ids),
            notes=notes_for_prompt(connection, scope),
            instructions=instructions_text(connection, channel_id),
        )


def people_by_id(connection: Connection, user_ids: set[str]) -> dict[str, Person]:
    """The people with these ids, as rows with Person's fields."""
    if not user_ids:
        return {}
    rows = connection.execute(PEOPLE_NAMED, {"ids": sorted(user_ids)})
    return {p.id: p for p in rows.all()}  # type: ignore[misc]


async def load_people(session: AsyncSession, user_ids: set[str]) -> dict[str, Person]:
    return await session.run_sync(lambda sync: people_by_id(sync.connection(), user_ids))
