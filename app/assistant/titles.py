"""A DM thread tomo answers gets a title (assistant.threads.setTitle): Slack lists the person's
conversations with the app by it ("shown when a user views the DM history with your app",
docs.slack.dev/reference/methods/assistant.threads.setTitle, which needs a `thread_ts`).

Only a thread has one: a DM answered at its top level (where it was written) has no thread to
title. The title is the thread's opening words, set once, with tomo's first reply there; a
failure is logged and changes nothing else.
"""

from __future__ import annotations

import logging

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.assistant.words import thread_title
from app.db.models import Message, Reply
from app.domain import ReplyReason, language_of
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)


async def title_thread(
    slack: SlackClient,
    engine: AsyncEngine,
    *,
    channel: str,
    thread_ts: str,
    reason: ReplyReason,
    claim_id: int,
) -> None:
    """Title the DM thread of claim `claim_id` when this is tomo's first reply in it."""
    if reason is not ReplyReason.DM or not thread_ts:
        return
    try:
        async with engine.connect() as connection:
            earlier = await connection.execute(
                select(func.count())
                .select_from(Reply)
                .where(
                    col(Reply.channel) == channel,
                    col(Reply.thread_ts) == thread_ts,
                    col(Reply.id) < claim_id,
                    col(Reply.posted_ts).is_not(None),
                )
            )
            if earlier.scalar_one():
                return
            opening = await connection.execute(
                select(col(Message.text)).where(
                    col(Message.channel) == channel, col(Message.ts) == thread_ts
                )
            )
            text = opening.scalar_one_or_none() or ""
        if not text.strip():
            return
        title = thread_title(language_of(text), text)
        await slack.set_thread_title(channel=channel, thread_ts=thread_ts, title=title)
    except SlackError as error:
        logger.info("the thread %s was not titled: %s", thread_ts, error)
    except Exception:
        logger.exception("the thread %s was not titled", thread_ts)
