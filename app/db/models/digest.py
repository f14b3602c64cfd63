"""Channels' digests: their schedules and the claims on posting each one."""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint
from sqlmodel import Field, SQLModel


class DigestSchedule(SQLModel, table=True):
    """A channel's digest schedule (`/tomo digest daily HH:MM` or `weekly DAY HH:MM`, read in
    TIMEZONE: app.digest.schedule): the wall-clock time, the next time it is due, and where the
    previous digest ended. The database is the truth: the `digest:{channel}` timer is set from
    it, at start-up too."""

    __tablename__ = "digest_schedule"

    channel: str = Field(primary_key=True, max_length=32)
    cadence: str = Field(max_length=16)  # daily, weekly
    weekday: int | None = None  # weekly: 0 Monday .. 6 Sunday
    hour: int = 0
    minute: int = 0
    next_due_at: float = 0.0  # epoch seconds: the digest's next due time
    last_until: float | None = None  # the end of the previous digest's period (scheduled or now)
    set_by: str = Field(default="", max_length=32)
    set_at: float = 0.0


class DigestRun(SQLModel, table=True):
    """A claim on posting one digest: a channel's due time (or a `now`'s moment) is posted once,
    whatever restarts, instances or kills; the text is stored before the first post, so a run
    taken over looks its posts up in Slack before posting again (app.digest.runs)."""

    __tablename__ = "digest_run"
    __table_args__ = (
        UniqueConstraint("channel", "due_at", name="uq_digest_run_due"),
        Index("ix_digest_run_created", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    due_at: float  # the due time it is for (a `now`: the moment it was asked)
    status: str = Field(default="claimed", max_length=16)  # claimed, posted, empty, failed, ...
    since: float = 0.0  # the period's messages: since <= Slack time < until
    until: float = 0.0
    messages: int = 0  # people's messages in the period
    chunks: str | None = None  # JSON list of the messages to post, stored before posting
    posted_ts: str | None = Field(default=None, max_length=32)
    error: str | None = None
    created_at: float = 0.0
    finished_at: float | None = None
