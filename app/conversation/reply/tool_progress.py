"""What the person sees while a reply's tools run (docs/how-tomo-works.md#tools), and who a
tool is asked for.

In a streamed reply each tool call is one of Slack's task chunks (`task_update`: its title,
`in_progress`, then `complete` or `error` with the links it found as `sources`; Slack's
chat.appendStream reference and slack-sdk's TaskUpdateChunk). Elsewhere, or where Slack
refuses chunks, the thread's status says it ("is searching messages for …"); a reply posted
whole at a DM's top level just takes longer.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlparse

from app.conversation.claims.taking import Claim
from app.conversation.reply.on_it import STATUS_TEXT
from app.conversation.reply.tool_loop import Progress, Task, TaskStatus
from app.domain import Context
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError
from app.tools.base import Asker
from app.tools.given import GivenUrls

logger = logging.getLogger(__name__)

TITLE_CHARS = 150
STATUS_CHARS = 100
SOURCES_PER_TASK = 10


def asker_for(claim: Claim, context: Context, *, team_id: str | None) -> Asker:
    """Who the reply is for: where it is posted, and the person whose message it answers
    (None for a reply tomo makes on its own); with the URLs people wrote in the conversation
    it was built from (tomo's own messages give none: the model wrote them)."""
    user_id = None
    if claim.reason.asked:
        answered = [m for m in context.target_turns() if m.ts == claim.trigger_ts]
        user_id = answered[0].user_id if answered else None
    return Asker(
        team_id=team_id,
        channel=claim.channel,
        thread_ts=claim.thread_ts,
        user_id=user_id,
        claim_id=claim.id,
        given=GivenUrls(
            m.text for m in context.conversation_history.get_all_messages() if not m.from_self
        ),
    )


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def task_chunk(task: Task) -> dict[str, Any]:
    """A task as Slack's `task_update` chunk."""
    chunk: dict[str, Any] = {
        "type": "task_update",
        "id": task.id,
        "title": _cut(task.title, TITLE_CHARS),
        "status": task.status,
    }
    if task.sources:
        chunk["sources"] = [
            {"type": "url", "url": url, "text": _cut(_label(url), 80)}
            for url in task.sources[:SOURCES_PER_TASK]
        ]
    return chunk


def _label(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.netloc}{parsed.path}" or url


def status_line(tasks: list[Task]) -> str:
    """The thread status while `tasks` run ("is searching messages for …"); once they are
    done, the usual "on it" status again (the model writes on)."""
    running = [t for t in tasks if t.status is TaskStatus.IN_PROGRESS]
    if not running:
        return STATUS_TEXT
    title = running[0].title
    said = f"is {title[:1].lower()}{title[1:]}".rstrip(".…")
    return _cut(said, STATUS_CHARS - 1) + "…"


def thread_status(slack: SlackClient, claim: Claim) -> Progress:
    """Progress as the thread's status (assistant.threads.setStatus), for a reply someone
    asked for in a thread; nothing shown otherwise. The reply's post clears it."""

    async def show(tasks: list[Task]) -> None:
        line = status_line(tasks)
        if not claim.thread_ts or not claim.reason.asked:
            return
        try:
            await slack.set_thread_status(
                channel=claim.channel, thread_ts=claim.thread_ts, status=line
            )
        except SlackError as error:
            logger.info("thread status not set: %s", error)

    return show
