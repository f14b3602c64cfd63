"""`/tomo instructions TEXT`, `/tomo instructions`, `/tomo instructions clear`
(docs/how-tomo-works.md#standing-instructions): a channel's standing instructions, set, shown
or removed. Setting or removing them is posted in the channel, with who did it, for everyone
there to see; the ephemeral answer only tells the person."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncEngine

from app.commands.answers import Said, escape, quoted, say
from app.commands.words import CLEAR_WORDS, normalize
from app.context.instructions import (
    MAX_CHARS,
    TooLong,
    clean,
    read_instructions,
    set_instructions,
)
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)


class InstructionsCommand:
    def __init__(self, *, engine: AsyncEngine, slack: SlackClient) -> None:
        self._engine = engine
        self._slack = slack

    async def run(self, *, channel: str, user: str, text: str, language: str) -> Said:
        if not text:
            async with self._engine.connect() as connection:
                found = await read_instructions(connection, channel)
            if found is None:
                return Said("instructions_none", {})
            return Said(
                "instructions_shown",
                {"quoted": quoted(found.text), "set_by": found.set_by, "set_at": found.set_at},
            )
        if normalize(text) in CLEAR_WORDS:
            await set_instructions(self._engine, channel=channel, text=None, user=user)
            logger.info("channel %s: standing instructions cleared by %s", channel, user)
            notice = say(language, "instructions_cleared_notice", user=user)
            return Said("instructions_cleared", {}, self._poster(channel, notice, language))
        try:
            kept = clean(text)
        except TooLong:
            return Said("instructions_too_long", {"length": len(text.strip()), "limit": MAX_CHARS})
        await set_instructions(self._engine, channel=channel, text=kept, user=user)
        logger.info("channel %s: instructions set by %s (%d chars)", channel, user, len(kept))
        notice = say(language, "instructions_set_notice", user=user, quoted=quoted(kept))
        post = self._poster(channel, notice, language)
        return Said("instructions_set", {"quoted": quoted(kept)}, post)

    def _poster(
        self, channel: str, text: str, language: str
    ) -> Callable[[], Awaitable[str | None]]:
        async def post() -> str | None:
            """Posted in the channel; a failure is told to the person (the change stays)."""
            try:
                await self._slack.post_message(channel=channel, text=text, thread_ts=None)
            except SlackError as error:
                logger.warning("could not post the instructions notice in %s: %s", channel, error)
                return say(language, "instructions_not_posted", error=escape(error.error or ""))
            return None

        return post
