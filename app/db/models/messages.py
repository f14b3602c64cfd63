"""Slack's messages as tomo stored them, the event ids it acknowledged, and the
messages Slack deleted.

A conversation is (channel, thread_ts) where thread_ts is "" for the top level of a channel:
the identity key of the judgment and reply job ids."""

from __future__ import annotations

from sqlalchemy import Index, text
from sqlmodel import Field, SQLModel

TOP_LEVEL = ""

# The rows ix_message_people holds; a query uses the index only when its WHERE has these terms.
PEOPLES_MESSAGES = (
    "kind = 'conversational' AND NOT deleted AND user_id IS NOT NULL AND bot_id IS NULL"
)


class Message(SQLModel, table=True):
    """One Slack message, thread replies included, keyed by (channel, ts)."""

    # Every stored message updates each index, on the ack path: only those queries use.
    __table_args__ = (
        Index("ix_message_thread", "channel", "thread_ts", "ts"),  # threads, context
        Index("ix_message_created", "created_at"),  # recovery, memory windows
        # People's conversational messages by channel and time: the lively-channel pace
        # (app.conversation.timing.pace) counts them from this index alone, without reading rows.
        Index(
            "ix_message_people",
            "channel",
            "ts",
            sqlite_where=text(PEOPLES_MESSAGES),
            postgresql_where=text(PEOPLES_MESSAGES),
        ),
    )

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)
    team_id: str = Field(default="", max_length=32)
    # "" for a top-level message (a thread parent included), the parent's ts for a reply.
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    # The conversation whose jobs this message drives ("" = the channel's top level);
    # a top-level mention starts its own thread, so its conversation_ts is its own ts.
    conversation_ts: str = Field(default=TOP_LEVEL, max_length=32)
    # What routing decided: "record" (bot or system message), "judgment" or "reply".
    route: str = Field(default="record", max_length=16)
    # For a message routed to a reply: why (mention, dm, auto_reply); kept for recovery.
    reply_reason: str | None = Field(default=None, max_length=16)
    user_id: str | None = Field(default=None, max_length=32)
    bot_id: str | None = Field(default=None, max_length=32)
    text: str = ""
    subtype: str | None = Field(default=None, max_length=64)
    # What kind of message it is (app.slack.kinds): "conversational" or "system".
    kind: str = Field(default="conversational", max_length=16)
    channel_type: str | None = Field(default=None, max_length=16)
    created_at: float = 0.0
    edited_at: float | None = None  # a person's last edit (or the deletion); not an unfurl
    deleted: bool = False
    # The files it carries (app.slack.files: JSON), with the text read from documents.
    files: str | None = None


class SeenEvent(SQLModel, table=True):
    """Event ids already acknowledged, so a redelivery is not processed twice."""

    __tablename__ = "seen_event"
    __table_args__ = (Index("ix_seen_event_received", "received_at"),)

    event_id: str = Field(primary_key=True, max_length=64)
    received_at: float = 0.0


class Removal(SQLModel, table=True):
    """A message Slack deleted, whose row is gone: only where and when, never what it said,
    so the memories built from it are written again without it (app.memory.sources)."""

    __table_args__ = (Index("ix_removal_created", "created_at"),)

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    created_at: float = 0.0  # the deleted message's Slack time (the retention goes by it)
    removed_at: float = 0.0
