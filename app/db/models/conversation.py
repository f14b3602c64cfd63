"""What tomo decided and did in a conversation: its judgments, its reply claims, the "on it"
sign, and people's feedback on its replies."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from app.db.models.messages import TOP_LEVEL


class Judgment(SQLModel, table=True):
    """Every decision of the judgment job, with the reason the model gave."""

    __table_args__ = (
        UniqueConstraint("channel", "thread_ts", "latest_ts", name="uq_judgment_latest"),
        Index("ix_judgment_decided", "decided_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    latest_ts: str = Field(max_length=32)
    decided_at: float = 0.0
    valid: bool = True
    # It judged a follow-up: a person's message in a conversation tomo takes part in.
    follow_up: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    should_respond: bool = False
    reason: str = ""
    confidence: float | None = None
    delay_seconds: float | None = None
    reply_at: float | None = None
    model: str = Field(default="", max_length=255)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # The emoji tomo reacted with instead of replying (a closing follow-up's "thanks!"),
    # written once Slack took it.
    reaction: str | None = Field(default=None, max_length=100)


class Reply(SQLModel, table=True):
    """A claim on answering one latest message; the unique key makes a second post impossible."""

    __table_args__ = (
        UniqueConstraint("channel", "thread_ts", "trigger_ts", name="uq_reply_trigger"),
        Index("ix_reply_created", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    trigger_ts: str = Field(max_length=32)
    reason: str = Field(default="", max_length=16)  # mention, dm, auto_reply, judgment
    # claimed, posted, failed; interrupted (its process stopped), uncertain (a post's outcome
    # is unknown: looked up in Slack before anything is posted again): app.conversation.claims.
    status: str = Field(default="claimed", max_length=16)
    posted_ts: str | None = Field(default=None, max_length=32)
    error: str | None = None
    created_at: float = 0.0
    posted_at: float | None = None
    # What to post, stored before the first message is sent (JSON: {"messages": [text, ...],
    # "model_failure": why the model gave no answer when they are the apology, or null): a
    # claim taken over finishes posting these, never a new answer.
    chunks: str | None = None


class OnIt(SQLModel, table=True):
    """A sign in Slack that tomo is working on a person's message (a thread status or a
    reaction), kept until it is cleared so that one left by a stopped process is cleared at
    the next start."""

    __tablename__ = "on_it"

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)  # the person's message
    thread_ts: str = Field(default="", max_length=32)  # the thread of the status
    kind: str = Field(max_length=16)  # status, reaction
    set_at: float = 0.0


class Feedback(SQLModel, table=True):
    """A person's 👍 or 👎 on one of tomo's replies (Slack's feedback buttons): one per person
    and message, a second click replacing the first."""

    __table_args__ = (
        UniqueConstraint("channel", "reply_ts", "user_id", name="uq_feedback_click"),
        Index("ix_feedback_at", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    reply_ts: str = Field(max_length=32)  # the message the buttons were on
    user_id: str = Field(max_length=32)
    value: str = Field(max_length=16)  # positive, negative
    # The reply claim the buttons were posted with (their block_id names it); None when the
    # click named none this version knows.
    claim_id: int | None = None
    at: float = 0.0
