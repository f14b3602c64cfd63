"""Thread history from Slack (docs/how-tomo-works.md#thread-history): fetched, stored through
the gate (app.gate.rules: nothing from before the channel's forget or older than the
retention), and the stored copy as fallback."""

from __future__ import annotations

import logging

from app.recording.recorder import Recorder
from app.slack.events import history_message
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)


class ThreadHistory:
    def __init__(self, *, slack: SlackClient, recorder: Recorder, limit: int) -> None:
        self._slack = slack
        self._recorder = recorder
        self._limit = limit

    async def refresh(self, *, channel: str, thread_ts: str) -> bool:
        """Store the thread's parent and its latest replies; False when Slack did not answer
        (the stored messages are then all there is)."""
        try:
            raw = await self._slack.thread_messages(
                channel=channel, thread_ts=thread_ts, limit=self._limit + 1
            )
        except SlackError as error:
            logger.warning(
                "thread history unavailable, using stored messages: %s (rate limited: %s)",
                error,
                error.rate_limited,
            )
            return False
        # A deleted parent comes back as its tombstone: the thread goes on without it.
        messages = [m for r in raw if (m := history_message(r, channel=channel)) is not None]
        await self._recorder.store(messages)
        return True
