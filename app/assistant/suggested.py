"""Suggested prompts when a person opens tomo's messages tab (docs/how-tomo-works.md#ai-app).

Slack's agent view sends `app_home_opened` with `tab: messages` when a person opens the DM with
the app, and the app sets the prompts at the top of the tab with assistant.threads.
setSuggestedPrompts by `channel_id` alone (bolt-python's docs/english/concepts/
adding-agent-features.md: "no thread_ts required"); the older assistant view sends
`assistant_thread_started`, whose prompts belong to its thread (`thread_ts`). Run in the
background, never on the acknowledgement's path; a failure is logged and nothing else.

The language: the person's Slack locale (users.info with include_locale), else the language
of their latest stored message, else English (the manifest's own prompts).
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.assistant.words import suggested
from app.db.models import Message
from app.domain import language_of
from app.slack.events import AssistantOpened
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

LOOKBACK_SECONDS = 30 * 86400.0  # the latest message that tells a person's language


class SuggestedPrompts:
    def __init__(self, *, slack: SlackClient, engine: AsyncEngine) -> None:
        self._slack, self._engine = slack, engine

    async def offer(self, opened: AssistantOpened) -> None:
        try:
            language = await self.language(opened.user_id)
            title, prompts = suggested(language)
            await self._slack.set_suggested_prompts(
                channel=opened.channel,
                prompts=prompts,
                title=title,
                thread_ts=opened.thread_ts,
            )
            logger.info("suggested prompts (%s) set for %s", language, opened.user_id)
        except SlackError as error:
            logger.warning("suggested prompts not set: %s", error)
        except Exception:
            logger.exception("suggested prompts not set")

    async def language(self, user_id: str) -> str:
        try:
            user = await self._slack.user_info(user_id, include_locale=True)
        except SlackError as error:
            logger.info("no locale for %s: %s", user_id, error)
            user = {}
        locale = user.get("locale")
        if isinstance(locale, str) and locale:
            return "ja" if locale.lower().startswith("ja") else "en"
        async with self._engine.connect() as connection:
            latest = await connection.execute(
                select(col(Message.text))
                .where(
                    col(Message.user_id) == user_id,
                    col(Message.created_at) >= time.time() - LOOKBACK_SECONDS,
                )
                .order_by(col(Message.created_at).desc())
                .limit(1)
            )
            text = latest.scalar_one_or_none()
        return language_of(text or "")
