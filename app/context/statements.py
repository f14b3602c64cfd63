"""What a context reads: its statements, built once with bind parameters (a context is built
for every judgment and reply, and building these expressions and their cache keys anew cost
more than running them). Rows come back as Core rows, not ORM objects, which cost ~25 µs
each to make.

Never a message written before the channel's /tomo forget (app.gate.rules: one read of
channel_control by its key), whatever is still stored while the forget's deletion runs; never
a memory of another conversation that the conversation's scope does not allow (app.gate.scope,
its bind parameters).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, Table, and_, bindparam, case, false, func, or_, select
from sqlmodel import SQLModel

from app.context.memories import CHANNEL_MEMORY_LIMIT, THREAD_MEMORY_LIMIT
from app.db.models import Channel, Memory, Message, Person
from app.gate.rules import after_forget
from app.gate.scope import every_shown, shown_public

TARGET_THREAD_LIMIT = 200


def _table(model: type[SQLModel]) -> Table:
    return model.__table__  # type: ignore[attr-defined,no-any-return]


MESSAGES, CHANNELS, PEOPLE, MEMORIES = (_table(m) for m in (Message, Channel, Person, Memory))
_M = MESSAGES.c
_CHAT_COLUMNS = (
    *(_M.ts, _M.thread_ts, _M.user_id, _M.bot_id, _M.text, _M.subtype, _M.kind),
    *(_M.created_at, _M.edited_at, _M.files),
)
RECENT = (
    select(*_CHAT_COLUMNS, func.count().over().label("total"))
    .where(_M.channel == bindparam("channel"), _M.deleted == false())
    .where(after_forget(bindparam("channel"), _M.created_at))
    .order_by(_M.ts.desc())
    .limit(bindparam("limit"))
)
TARGET_THREAD = (
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
CHANNELS_NAMED = select(CHANNELS).where(CHANNELS.c.id.in_(bindparam("ids", expanding=True)))
PEOPLE_NAMED = select(PEOPLE).where(PEOPLE.c.id.in_(bindparam("ids", expanding=True)))


def _memories_statement() -> Select[Any]:
    """The memories a prompt may use, most wanted first, in one query and a bounded number
    of rows: the workspace's, this channel's, its recent threads', then those of public
    channels active lately, the most recent first; with the bind parameters of the
    conversation's scope (`Scope.bound`): the workspace's only where every public channel
    with a memory (what the workspace's are written from: app.memory.plans) may be shown,
    another channel's only where it may be."""
    memory, channel = MEMORIES.c, CHANNELS.c
    public = select(channel.id).where(channel.is_private == false(), channel.is_im == false())
    source = MEMORIES.alias("source").c
    workspace = every_shown(source.scope_id, source.scope == "channel", source.scope_id.in_(public))
    here = and_(memory.scope == "channel", memory.scope_id == bindparam("channel"))
    rank = case((memory.scope == "workspace", 0), (here, 1), (memory.scope == "thread", 2), else_=3)
    position = func.row_number().over(partition_by=rank, order_by=memory.source_ts.desc())
    ranked = (
        select(MEMORIES, rank.label("rank"), position.label("position"))
        .where(
            or_(
                and_(memory.scope == "workspace", workspace),
                here,
                and_(
                    memory.scope == "channel",
                    memory.source_ts >= bindparam("active_since"),
                    memory.scope_id.in_(public),
                    shown_public(memory.scope_id),
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


MEMORIES_RECALLED = _memories_statement()


def like_prefix(prefix: str) -> str:
    escaped = prefix.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return escaped + "%"
