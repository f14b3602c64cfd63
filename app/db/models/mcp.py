"""The tables of tools from MCP servers (docs/tools.md#mcp): what each server offers and
whether it answers, the tools switched off per channel, and the calls waiting for a person's
approval. Registered with the other tables by app.db.models."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class McpServerState(SQLModel, table=True):
    """A server as the process that runs replies last found it: `ok` or `unreachable`, and
    the tools tomo may offer from it (JSON: [{"name", "description", "approve"}]). What
    /healthz and `/tomo tools` read, in the web process, which never speaks MCP itself."""

    __tablename__ = "mcp_server"

    name: str = Field(primary_key=True, max_length=32)
    state: str = Field(max_length=16)
    tools: str = "[]"
    error: str | None = Field(default=None, max_length=300)
    checked_at: float = 0.0


class McpSwitch(SQLModel, table=True):
    """A server (`jira`) or one of its tools (`jira__create_issue`) switched off in a channel
    with `/tomo tools off`; `/tomo tools on` deletes the row."""

    __tablename__ = "mcp_switch"

    channel: str = Field(primary_key=True, max_length=32)
    name: str = Field(primary_key=True, max_length=100)
    user_id: str = Field(default="", max_length=32)
    at: float = 0.0


class ApprovalState(StrEnum):
    PENDING = "pending"  # the card waits for a decision
    APPROVED = "approved"  # the call is to be made
    DENIED = "denied"  # declined by a click
    EXPIRED = "expired"  # no decision in time: declined
    CALLING = "calling"  # the call is being made (never made twice: see app.tools.mcp.approvals)
    CUT_SHORT = "cut_short"  # the process making the call died: never made again
    ANSWERED = "answered"  # its result (or the refusal) is stored; a reply continues with it
    DONE = "done"  # that reply is settled


class McpApproval(SQLModel, table=True):
    """A call of an `approve` tool the model asked for: not made until the person whose
    message the reply answered approves it on its card."""

    __tablename__ = "mcp_approval"
    __table_args__ = (
        Index("ix_mcp_approval_state", "state"),
        Index("ix_mcp_approval_claim", "claim_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    thread_ts: str = Field(default="", max_length=32)  # the conversation (job ids)
    reply_thread_ts: str = Field(default="", max_length=32)  # where the card is posted
    trigger_ts: str = Field(max_length=32)  # the person's message the reply answered
    reason: str = Field(default="", max_length=16)  # that reply's (app.domain.ReplyReason)
    claim_id: int  # the reply whose model asked (app.db.models.Reply.id)
    user_id: str = Field(max_length=32)  # the one person who may decide
    language: str = Field(default="en", max_length=8)  # of the card: the person's message's
    server: str = Field(max_length=32)
    tool: str = Field(max_length=100)
    arguments: str  # JSON, as the model wrote them
    call_id: str = Field(max_length=100)  # the model's id of the call
    state: str = Field(default=ApprovalState.PENDING.value, max_length=16)
    decision: str | None = Field(default=None, max_length=16)  # approved, denied, expired
    decided_by: str | None = Field(default=None, max_length=32)
    card_ts: str | None = Field(default=None, max_length=32)
    result: str | None = None  # what the model is told (the call's result, or the refusal)
    created_at: float = 0.0
    expires_at: float = 0.0
    decided_at: float | None = None
    called_at: float | None = None
