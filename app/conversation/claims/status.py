"""What a claim's status says (docs/how-tomo-works.md#reply): the states of a `reply` row, as
stored and as /admin shows them, and which of them are owed, unfinished or silent."""

from __future__ import annotations

from enum import StrEnum

from sqlalchemy import ColumnElement, and_, or_
from sqlmodel import col

from app.db.models import Reply


class ReplyStatus(StrEnum):
    """A claim is taken `claimed` and ends `posted` or `failed` (or `withheld`: the own-voice
    limits stopped it, app.conversation.voice.own_voice). `interrupted` (its process stopped)
    and `uncertain` (Slack may or may not have a post of it) are owed still: another job may
    take the claim over."""

    CLAIMED = "claimed"
    POSTED = "posted"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    UNCERTAIN = "uncertain"
    WITHHELD = "withheld"


OWED = frozenset({ReplyStatus.INTERRUPTED, ReplyStatus.UNCERTAIN})  # may be taken over
UNFINISHED = frozenset({ReplyStatus.CLAIMED, *OWED})
# The statuses of claims that posted nothing (unless they have a posted_ts).
NOT_SPOKEN = (ReplyStatus.FAILED, ReplyStatus.WITHHELD)


def spoke() -> ColumnElement[bool]:
    """The claims through which tomo said something (or is saying it now)."""
    # Each status compared on its own: a NOT IN of a list is rendered again on every run.
    said = and_(*(col(Reply.status) != status for status in NOT_SPOKEN))
    return or_(said, col(Reply.posted_ts).is_not(None))
