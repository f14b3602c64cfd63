"""What tomo remembers: the LLM-written memories and the notes of its `note` tool."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel


class Memory(SQLModel, table=True):
    """An LLM-written memory of the workspace, a channel or a thread."""

    __table_args__ = (UniqueConstraint("scope", "scope_id", "kind", name="uq_memory_scope"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str = Field(max_length=16)  # workspace, channel, thread
    scope_id: str = Field(default="", max_length=80)  # "", channel id, "channel:thread_ts"
    kind: str = Field(max_length=16)  # long_term, short_term, summary
    content: str = ""
    source_ts: str = Field(default="", max_length=64)  # newest source the memory has seen
    updated_at: float = 0.0
    model: str = Field(default="", max_length=255)


class Note(SQLModel, table=True):
    """Something tomo wrote down with its `note` tool (app.tools.note). It belongs where it was
    written: a public channel's note is the workspace's ("workspace"), any other conversation's
    is that conversation's alone ("conversation")."""

    __table_args__ = (
        # A reply run again after a restart has the same claim: its notes are written once.
        UniqueConstraint("claim_id", "text_hash", name="uq_note_claim_text"),
        Index("ix_note_conversation", "conversation", "created_at"),
        Index("ix_note_scope", "scope", "importance", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    team_id: str = Field(default="", max_length=32)
    conversation: str = Field(max_length=32)  # the channel (or DM) it was written in
    scope: str = Field(max_length=16)  # workspace, conversation
    text: str = Field(max_length=1000)
    text_hash: str = Field(max_length=64)  # sha256 of the text, for the uniqueness rule
    importance: int = 3  # 1-5
    about: str = Field(default="", max_length=400)  # user ids, comma-separated
    created_at: float = 0.0
    claim_id: int  # the reply claim that wrote it (app.db.models.Reply.id)
