"""The calls tomo made to models (written by app.llm.records)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class LLMCall(SQLModel, table=True):
    """Every call to a model, so spend and latency are known."""

    __tablename__ = "llm_call"
    __table_args__ = (
        Index("ix_llm_call_started", "started_at"),
        Index("ix_llm_call_reply", "reply_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    purpose: str = Field(max_length=32)  # judgment, reply, memory
    model: str = Field(default="", max_length=255)
    started_at: float = 0.0
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    # Of the prompt tokens, those the provider read from its cache (billed at a fraction).
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    success: bool = True
    error: str | None = None
    # The reply claim (Reply.id) a call was made for: a reply's rounds of tool calls and its
    # answer. Not a foreign key: calls and claims expire on their own (retention).
    reply_id: int | None = None
