"""What a prompt shows of tomo's notebook (app.memory.notebook writes and removes the notes):
which notes a reply in a conversation may see, and the ones its prompt shows.

A note belongs where it was written. One written in a public channel is the workspace's: any
conversation may see it, while that channel stays public (a channel made private keeps its
notes to itself from then, decided when they are read). One written anywhere else is that
conversation's alone. Who may see a note is decided here, from the conversation a reply is
posted in and its scope (app.gate.scope), never from what the model asks.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Connection,
    and_,
    bindparam,
    false,
    or_,
    select,
    union_all,
)
from sqlmodel import col

from app.db.models import Channel, Note
from app.domain import NoteLine
from app.gate.scope import Scope, shown_public

WORKSPACE = "workspace"
CONVERSATION = "conversation"
IMPORTANT = 4  # notes at least this important enter every prompt that may see them
IMPORTANT_LIMIT = 20
RECENT_LIMIT = 5  # the conversation's own most recent notes, whatever their importance


def shared_now() -> ColumnElement[bool]:
    """SQL: a note that is the workspace's now. Decided when read, from what its channel is
    now: a note written in a channel since made private belongs to that channel alone."""
    public = select(col(Channel.id)).where(
        col(Channel.is_private) == false(), col(Channel.is_im) == false()
    )
    return and_(col(Note.scope) == WORKSPACE, col(Note.conversation).in_(public))


def visible_in(channel: Any) -> ColumnElement[bool]:
    """SQL with the bind parameters of the reply's scope (`Scope.bound`): the notes a reply
    posted in `channel` (a value or a bound parameter) may show: the workspace's that its
    scope allows, and the conversation's own."""
    shared = and_(shared_now(), shown_public(col(Note.conversation)))
    return or_(shared, col(Note.conversation) == channel)


def _prompt_statement() -> CompoundSelect:
    """The notes a prompt shows, in one query (bound by `channel`): the important ones it may
    see, and the conversation's own most recent."""
    table = Note.__table__  # type: ignore[attr-defined]
    channel: BindParameter[str] = bindparam("channel")
    newest = (col(Note.created_at).desc(), col(Note.id).desc())
    important = (
        select(table)
        .where(visible_in(channel), col(Note.importance) >= IMPORTANT)
        .order_by(*newest)
        .limit(IMPORTANT_LIMIT)
        .subquery()
    )
    recent = (
        select(table)
        .where(col(Note.conversation) == channel)
        .order_by(*newest)
        .limit(RECENT_LIMIT)
        .subquery()
    )
    return union_all(select(important), select(recent))


_FOR_PROMPT = _prompt_statement()


def for_prompt(connection: Connection, scope: Scope) -> tuple[NoteLine, ...]:
    """The notes a prompt in the scope's conversation shows, newest first: the important ones
    it may see (at most IMPORTANT_LIMIT) and its own RECENT_LIMIT most recent."""
    bound = {"channel": scope.conversation, **scope.bound()}
    rows = {row.id: row for row in connection.execute(_FOR_PROMPT, bound)}
    ordered = sorted(rows.values(), key=lambda r: (r.created_at, r.id), reverse=True)
    return tuple(line_of(row) for row in ordered)


def line_of(row: Any) -> NoteLine:
    """A note row (a Note, or a Core row with its fields) as a prompt shows it."""
    return NoteLine(
        id=int(row.id or 0),
        text=row.text,
        importance=row.importance,
        about=tuple(a for a in row.about.split(",") if a),
        created_at=row.created_at,
    )
