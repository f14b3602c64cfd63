"""tomo's notebook: the notes its `note` tool writes (app.tools.note) and removes, and the lists
`/tomo memory` and the admin page show. Which notes a reply may see and its prompt shows is the
context's (app.context.notes).

A note belongs where it was written. One written in a public channel is the workspace's: any
conversation may see it, while that channel stays public (a channel made private keeps its
notes to itself from then, decided when they are read). One written anywhere else (a private
channel, a group DM, a DM, or a conversation tomo knows nothing of) is that conversation's
alone, shown nowhere else, not even in a DM with one of its members. Where a note is written
is decided here (`scope_for`); who may see it, in app.context.notes, from the conversation a
reply is posted in and its scope (app.gate.scope: where a guest or a person of another
organisation reads, the workspace's notes only of the channels they read, if any), never from
what the model asks.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, delete, false, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.context.notes import CONVERSATION, WORKSPACE, line_of, shared_now, visible_in
from app.db.dialects import upsert
from app.db.models import Channel, Note
from app.domain import NoteLine
from app.gate.scope import Scope

NOTE_CHARS = 500  # one note's text, at most
LISTED_LIMIT = 50  # notes `/tomo memory` and the admin page list


# The numbers a note's id (an INTEGER key) can be: 64-bit on SQLite, 32-bit on PostgreSQL.
_ID_RANGE = {"sqlite": range(-(2**63), 2**63), "postgresql": range(-(2**31), 2**31)}


@dataclass(frozen=True)
class Written:
    note: Note
    new: bool  # False: this reply had written it already (a run after a restart)


def written_in(channel: str) -> ColumnElement[bool]:
    """SQL: the notes written in `channel` (what forgetting or deleting it removes)."""
    return col(Note.conversation) == channel


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def scope_for(connection: AsyncConnection, channel: str, *, shared: bool = True) -> str:
    """ "workspace" for a public channel tomo knows, "conversation" for anything else, and
    for a conversation whose readers may not see the workspace's (`shared` false: a guest or
    a person of another organisation is in it)."""
    if not shared:
        return CONVERSATION
    public = await connection.execute(
        select(col(Channel.id)).where(
            col(Channel.id) == channel,
            col(Channel.is_private) == false(),
            col(Channel.is_im) == false(),
        )
    )
    return WORKSPACE if public.first() is not None else CONVERSATION


async def write(
    engine: AsyncEngine,
    *,
    team_id: str,
    channel: str,
    claim_id: int,
    text: str,
    importance: int,
    about: Sequence[str],
    shared: bool = True,
    now: float | None = None,
) -> Written:
    """Write a note in `channel` for the reply holding `claim_id`, once: the same text from
    the same claim is the note already written. `shared` false: it stays in the channel
    whatever the channel is (app.gate.scopes: guests or other organisations read there)."""
    digest = text_hash(text)
    async with engine.begin() as connection:
        scope = await scope_for(connection, channel, shared=shared)
        insert = upsert(engine.dialect.name, Note).values(
            team_id=team_id,
            conversation=channel,
            scope=scope,
            text=text,
            text_hash=digest,
            importance=importance,
            about=",".join(about),
            created_at=time.time() if now is None else now,
            claim_id=claim_id,
        )
        inserted = await connection.execute(
            insert.on_conflict_do_nothing(index_elements=["claim_id", "text_hash"])
        )
        row = (
            await connection.execute(
                select(Note.__table__).where(  # type: ignore[attr-defined]
                    col(Note.claim_id) == claim_id, col(Note.text_hash) == digest
                )
            )
        ).one()
    return Written(note=Note.model_validate(dict(row._mapping)), new=bool(inserted.rowcount))


async def remove(engine: AsyncEngine, *, note_id: int, scope: Scope) -> bool:
    """Delete a note a reply posted in the scope's conversation may see; False when there is
    none such (as for a number no note's id can be)."""
    if note_id not in _ID_RANGE.get(engine.dialect.name, _ID_RANGE["sqlite"]):
        return False  # the driver would refuse to bind it (OverflowError, DataError)
    async with engine.begin() as connection:
        deleted = await connection.execute(
            delete(Note).where(col(Note.id) == note_id, visible_in(scope.conversation)),
            scope.bound(),
        )
    return bool(deleted.rowcount)


async def of_channel(connection: AsyncConnection, channel: str) -> list[NoteLine]:
    """The notes written in `channel`, newest first (at most LISTED_LIMIT)."""
    rows = await connection.execute(
        select(Note.__table__)  # type: ignore[attr-defined]
        .where(written_in(channel))
        .order_by(col(Note.created_at).desc(), col(Note.id).desc())
        .limit(LISTED_LIMIT)
    )
    return [line_of(row) for row in rows.all()]


async def workspace_count(connection: AsyncConnection) -> int:
    counted = await connection.execute(select(func.count()).select_from(Note).where(shared_now()))
    return int(counted.scalar_one())


async def every_note(connection: AsyncConnection, *, limit: int) -> list[Note]:
    """The newest notes of the whole workspace (the admin page), newest first."""
    rows = await connection.execute(
        select(Note.__table__)  # type: ignore[attr-defined]
        .order_by(col(Note.created_at).desc(), col(Note.id).desc())
        .limit(limit)
    )
    return [Note.model_validate(dict(row._mapping)) for row in rows.all()]
