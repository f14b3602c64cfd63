"""The one context builder that judgment, reply and memory all use.

It costs a fixed number of queries whatever the number of channels: memories, the channels
they name, the channel's recent messages, the target thread, the names of the people who
appear, the notes it may see (app.memory.notebook) and the channel's standing instructions
(app.context.instructions). What it reads is bounded too:
CHANNEL_MESSAGES_LIMIT messages, memories within the budget of app.context.memories, and a few
dozen notes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    and_,
    bindparam,
    case,
    false,
    func,
    or_,
    select,
)
from sqlmodel import SQLModel
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.chat import author_id, split_channel, to_chat
from app.context.instructions import instructions_text
from app.context.memories import CHANNEL_MEMORY_LIMIT, THREAD_MEMORY_LIMIT, recall
from app.db.models import Channel, Memory, Message, Person
from app.domain import Context, NoteLine
from app.gate.rules import after_forget
from app.memory import notebook
from app.slack.identity import Me

TARGET_THREAD_LIMIT = 200

# Looks up a channel's and people's names and waits for them (Directory.learn).
Learn = Callable[..., Awaitable[None]]


@dataclass(frozen=True)
class Persona:
    name: str
    prompt: str


def _table(model: type[SQLModel]) -> Table:
    return model.__table__  # type: ignore[attr-defined,no-any-return]


MESSAGES, CHANNELS, PEOPLE, MEMORIES = (_table(m) for m in (Message, Channel, Person, Memory))
_M = MESSAGES.c
_CHAT_COLUMNS = (
    *(_M.ts, _M.thread_ts, _M.user_id, _M.bot_id, _M.text, _M.subtype, _M.kind),
    *(_M.created_at, _M.edited_at, _M.files),
)
# Built once, with bind parameters: a context is built for every judgment and reply, and
# building these expressions (and their cache keys) anew cost more than running them.
# Rows come back as Core rows, not ORM objects, which cost ~25 µs each to make.
# Never a message written before the channel's /tomo forget (app.gate.rules: one read of
# channel_control by its key), whatever is still stored while the forget's deletion runs.
_RECENT = (
    select(*_CHAT_COLUMNS, func.count().over().label("total"))
    .where(_M.channel == bindparam("channel"), _M.deleted == false())
    .where(after_forget(bindparam("channel"), _M.created_at))
    .order_by(_M.ts.desc())
    .limit(bindparam("limit"))
)
_TARGET_THREAD = (
    select(*_CHAT_COLUMNS)
    .where(_M.deleted == false(), after_forget(bindparam("channel"), _M.created_at))
    # Each branch names the channel so both use an index (ix_message_thread, the primary
    # key); `channel = ? AND (a OR b)` scans the whole channel.
    .where(
        or_(
            and_(_M.channel == bindparam("channel"), _M.thread_ts == bindparam("thread")),
            and_(_M.channel == bindparam("channel"), _M.ts == bindparam("thread")),
        )
    )
    .order_by(_M.ts.desc())
    .limit(TARGET_THREAD_LIMIT)
)
_CHANNELS = select(CHANNELS).where(CHANNELS.c.id.in_(bindparam("ids", expanding=True)))
_PEOPLE = select(PEOPLE).where(PEOPLE.c.id.in_(bindparam("ids", expanding=True)))


def _memories_statement() -> Select[Any]:
    """The memories a prompt may use, most wanted first, in one query and a bounded number
    of rows: the workspace's, this channel's, its recent threads', then those of public
    channels active lately, the most recent first."""
    memory, channel = MEMORIES.c, CHANNELS.c
    public = select(channel.id).where(channel.is_private == false(), channel.is_im == false())
    here = and_(memory.scope == "channel", memory.scope_id == bindparam("channel"))
    rank = case((memory.scope == "workspace", 0), (here, 1), (memory.scope == "thread", 2), else_=3)
    position = func.row_number().over(partition_by=rank, order_by=memory.source_ts.desc())
    ranked = (
        select(MEMORIES, rank.label("rank"), position.label("position"))
        .where(
            or_(
                memory.scope == "workspace",
                here,
                and_(
                    memory.scope == "channel",
                    memory.source_ts >= bindparam("active_since"),
                    memory.scope_id.in_(public),
                ),
                and_(
                    memory.scope == "thread",
                    memory.scope_id.like(bindparam("threads_like"), escape="/"),
                    memory.source_ts >= bindparam("thread_since"),
                ),
            )
        )
        .subquery()
    )
    most = case((ranked.c.rank == 2, THREAD_MEMORY_LIMIT), else_=2 * CHANNEL_MEMORY_LIMIT)
    return (
        select(*(ranked.c[column.name] for column in MEMORIES.c))
        .where(ranked.c.position <= most)
        .order_by(ranked.c.rank, ranked.c.source_ts.desc())
    )


_MEMORIES = _memories_statement()


def window(total: int, limit: int, *, blocks: int = 4) -> int:
    """How many of the newest of `total` messages a prompt shows: at most `limit`, the oldest
    one shown moving on only by whole blocks (`limit` / `blocks`) as messages arrive, so that
    consecutive prompts keep the same start (a prefix providers can cache)."""
    if total <= limit:
        return total
    block = max(1, limit // blocks)
    start = -(-(total - limit) // block) * block  # the first block boundary leaving <= limit
    return total - start


def _like_prefix(prefix: str) -> str:
    escaped = prefix.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return escaped + "%"


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
        reader: Engine | None = None,
        learn: Learn | None = None,
    ) -> None:
        """`reader`: a synchronous engine on the same SQLite file (app.db.engine.sqlite_reader);
        the five statements then run together on a thread instead of through the session.
        `learn`: looks up the channel and the people a context would show without a name
        (app.context.directory), so that every author and channel in a prompt has its name
        (docs/how-tomo-works.md#recording); without it a context shows what the directory holds."""
        self._persona = persona
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
        context = await self._build(session, channel_id, thread_ts, me, now)
        if self._learn is None or (not context.unnamed_people and context.channel_known):
            return context
        # The lookups wait for Slack, then for a connection of their own to store the names:
        # the session lets go of its connection meanwhile (it takes one again to read), so
        # jobs running at once never hold every connection while each waits for another.
        await session.close()
        await self._learn(
            channel=None if context.channel_known else channel_id, people=context.unnamed_people
        )
        return await self._build(session, channel_id, thread_ts, me, now)

    async def _build(
        self, session: AsyncSession, channel_id: str, thread_ts: str, me: Me, now: float | None
    ) -> Context:
        now = time.time() if now is None else now
        if self.reader is not None:
            rows = await asyncio.to_thread(self._read, channel_id, thread_ts, now)
        else:
            rows = await session.run_sync(
                lambda sync: self._fetch(sync.connection(), channel_id, thread_ts, now)
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

    def _read(self, channel_id: str, thread_ts: str, now: float) -> _Rows:
        assert self.reader is not None
        with self.reader.connect() as connection:
            return self._fetch(connection, channel_id, thread_ts, now)

    def _fetch(self, connection: Connection, channel_id: str, thread_ts: str, now: float) -> _Rows:
        memories: Sequence[Memory] = connection.execute(
            _MEMORIES,
            {
                "channel": channel_id,
                "active_since": f"{now - self._active_days * 86400:.6f}",
                "thread_since": f"{now - self._thread_days * 86400:.6f}",
                "threads_like": _like_prefix(f"{channel_id}:"),
            },
        ).all()  # type: ignore[assignment]
        wanted = {channel_id} | {m.scope_id for m in memories if m.scope == "channel"}
        found = connection.execute(_CHANNELS, {"ids": sorted(wanted)})
        rows = connection.execute(_RECENT, {"channel": channel_id, "limit": self._limit}).all()
        recent: Sequence[Message] = rows[: window(rows[0].total, self._limit)] if rows else ()  # type: ignore[assignment]
        target: Sequence[Message] = ()
        if thread_ts:
            target = connection.execute(
                _TARGET_THREAD, {"channel": channel_id, "thread": thread_ts}
            ).all()  # type: ignore[assignment]
        user_ids = {a for r in (*recent, *target) if (a := author_id(r))}
        return _Rows(
            memories=memories,
            channels={c.id: c for c in found.all()},  # type: ignore[misc]
            recent=recent,
            target=target,
            people=people_by_id(connection, user_ids),
            notes=notebook.for_prompt(connection, channel_id),
            instructions=instructions_text(connection, channel_id),
        )


def people_by_id(connection: Connection, user_ids: set[str]) -> dict[str, Person]:
    """The people with these ids, as rows with Person's fields."""
    if not user_ids:
        return {}
    rows = connection.execute(_PEOPLE, {"ids": sorted(user_ids)})
    return {p.id: p for p in rows.all()}  # type: ignore[misc]


async def load_people(session: AsyncSession, user_ids: set[str]) -> dict[str, Person]:
    return await session.run_sync(lambda sync: people_by_id(sync.connection(), user_ids))
