"""Posting a digest's messages once each, at the channel's top level. Every post carries Slack
message metadata naming its claim (app.digest.runs) and its place in the digest; a claim taken
over (its process stopped, or its instance died, after the text was stored) first looks its
posts up in Slack (conversations.history with include_all_metadata) and posts only those not
there. A post whose outcome Slack leaves unknown stops the run: the claim stays owed, and the
next run looks again before posting."""

from __future__ import annotations

import logging
from typing import Any

from app.digest.runs import Run
from app.slack.web.client import SlackClient

logger = logging.getLogger(__name__)

EVENT_TYPE = "tomo_digest"
LOOK_BACK_SECONDS = 60.0  # before the claim's time: a clock a little behind Slack's


def metadata(run: Run, chunk: int) -> dict[str, Any]:
    payload = {"run": run.id, "due_at": run.due_at, "chunk": chunk}
    return {"event_type": EVENT_TYPE, "event_payload": payload}


async def posted_already(slack: SlackClient, run: Run) -> dict[int, str]:
    """The run's messages Slack has, by their place in the digest."""
    messages = await slack.posts_with_metadata(
        channel=run.channel,
        thread_ts="",
        after_ts=f"{run.created_at - LOOK_BACK_SECONDS:.6f}",
        event_type=EVENT_TYPE,
    )
    found: dict[int, str] = {}
    for message in messages:
        payload = message["metadata"].get("event_payload")
        if not isinstance(payload, dict) or str(payload.get("run")) != str(run.id):
            continue
        if payload.get("due_at") != run.due_at:
            continue  # another database's run of the same number
        try:
            found.setdefault(int(payload.get("chunk", -1)), str(message["ts"]))
        except (TypeError, ValueError):
            continue
    return found


async def post_digest(slack: SlackClient, run: Run, chunks: list[str]) -> list[str]:
    """Post each chunk not yet in Slack, in order; the ts of each. A SlackError leaves it to
    the caller (the claim released: looked up again before anything is posted again)."""
    found = await posted_already(slack, run) if run.taken_over else {}
    stamps = []
    for number, text in enumerate(chunks):
        if number in found:
            logger.info("digest %d part %d is in Slack as %s", run.id, number, found[number])
            stamps.append(found[number])
            continue
        stamps.append(
            await slack.post_message(
                channel=run.channel, text=text, thread_ts=None, metadata=metadata(run, number)
            )
        )
    return stamps
