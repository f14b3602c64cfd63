"""Poison rows: messages stored before ingress refused a `ts` that is no Slack timestamp.

Such a row ("inf", "1e300", 32 digits, a ts in the future) breaks whatever formats its time or
sets a timer from it, and sorts as its conversation's newest message for ever. Every reader
that would (recovery, the context builder and with it memory) skips it, with a log line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Protocol, TypeVar

from app.slack.timestamps import slack_ts

logger = logging.getLogger(__name__)


class _Stored(Protocol):
    @property
    def ts(self) -> str: ...


R = TypeVar("R", bound=_Stored)


def without_poison(rows: Iterable[R], *, now: float | None = None) -> list[R]:
    """The rows whose ts (and conversation_ts, when the row has one) is a Slack timestamp."""
    now = time.time() if now is None else now
    kept = []
    for row in rows:
        conversation = getattr(row, "conversation_ts", "")
        if slack_ts(row.ts, now=now) is None or (
            conversation and slack_ts(conversation, now=now) is None
        ):
            channel = getattr(row, "channel", "?")
            logger.warning("skipped message %r of %s: not a Slack timestamp", row.ts, channel)
        else:
            kept.append(row)
    return kept
