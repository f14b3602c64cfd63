"""Replies that appear as they are written (docs/how-tomo-works.md#streaming): the model's text,
made safe (app.conversation.reply.stream_text), streamed into Slack
(app.conversation.reply.stream_writer)
for a reply someone asked for; a streamed reply left unfinished is finished in the same
messages.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from sqlalchemy.ext.asyncio import AsyncEngine

from app.conversation.claims import ending
from app.conversation.claims.status import ReplyStatus
from app.conversation.claims.taking import Claim
from app.conversation.reply.on_it import REACTION_NAME
from app.conversation.reply.posting import Poster
from app.conversation.reply.stream_text import SafeText, split_for_stream
from app.conversation.reply.stream_writer import (
    MESSAGE_LIMIT,
    StartRefused,
    StreamWriter,
    store_stream,
)
from app.conversation.reply.tool_loop import Progress, Task, ToolLoop
from app.conversation.reply.tool_progress import task_chunk, thread_status
from app.llm import LLMError
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError
from app.slack.web.streams import GOV_SLACK_HOST, refused_everywhere
from app.tools.base import Asker

logger = logging.getLogger(__name__)

# Where a model broke off mid-answer: the message ends with this, finished, not left open.
CUT_OFF_NOTE = "\n\n_(途中で止まってしまいました。もう一度話しかけてください。/ I was cut off here; please ask again.)_"  # noqa: E501

# The whole reply of a claim, written again from current data (its tools run again too).
WriteAgain = Callable[[Claim], Awaitable[str]]


@dataclass
class Streamed:
    posted: list[str] = field(default_factory=list)  # the ts of each message, in order
    failure: str | None = None  # the model broke off (the messages end with CUT_OFF_NOTE)
    nothing_written: bool = False  # the model failed before its first words: nothing in Slack
    whole: str | None = None  # Slack refused to stream: the model's answer, to post whole


class StreamedReplies:
    def __init__(
        self,
        *,
        enabled: bool,
        api_url: str,
        slack: SlackClient,
        engine: AsyncEngine,
        poster: Poster,
        loop: ToolLoop,
    ) -> None:
        self._slack, self._engine, self._poster, self._loop = slack, engine, poster, loop
        self._enabled = enabled
        self._refused: str | None = None  # why Slack will not stream for this workspace
        self._tasks_refused: str | None = None  # why Slack takes no task chunks (status then)
        if (urlparse(api_url).hostname or "").endswith(GOV_SLACK_HOST):
            self._refused = "GovSlack has no chat streaming"
            if enabled:
                logger.warning("replies are posted whole: %s", self._refused)

    def wanted(self, claim: Claim) -> bool:
        """Whether this claim's reply is streamed: someone asked for it, and Slack allows."""
        return self._enabled and claim.reason.asked and self._refused is None

    async def answer(
        self,
        claim: Claim,
        messages: list[dict[str, Any]],
        *,
        recipient: tuple[str | None, str | None],
        asker: Asker,
    ) -> Streamed:
        """Stream the reply and settle its claim; unless `nothing_written` (then the reply is
        to be posted whole: the model's answer `whole`, or an apology for its `failure`)."""
        try:
            streamed = await self.reply(claim, messages, recipient=recipient, asker=asker)
        except SlackError as error:
            await self._unsettled(claim, error)
            return Streamed()
        if not streamed.nothing_written:
            await self._settle(claim, streamed.posted, failure=streamed.failure)
        return streamed

    async def finish_left(self, claim: Claim, write_again: WriteAgain) -> list[str]:
        """Finish a streamed reply left unfinished (resume) and settle its claim."""
        try:
            posted = await self.resume(claim, write_again)
        except SlackError as error:
            await self._unsettled(claim, error)
            return []
        await self._settle(claim, posted, failure=claim.error)
        return posted

    async def _settle(self, claim: Claim, posted: list[str], *, failure: str | None) -> None:
        status = ReplyStatus.FAILED if failure else ReplyStatus.POSTED
        logger.info("streamed the reply in %d message(s): %s", len(posted), ",".join(posted))
        await ending.settle(self._engine, claim, status=status, error=failure, posted=posted)

    async def _unsettled(self, claim: Claim, error: SlackError) -> None:
        """The streamed reply may not be finished: owed, finished by the next to take it."""
        status = ReplyStatus.INTERRUPTED if error.rate_limited else ReplyStatus.UNCERTAIN
        logger.error("the streamed reply is unsettled (finished later): %s", error)
        await ending.settle(self._engine, claim, status=status, error=str(error))

    async def reply(
        self,
        claim: Claim,
        messages: list[dict[str, Any]],
        *,
        recipient: tuple[str | None, str | None],
        asker: Asker,
    ) -> Streamed:
        """Stream the model's answer into Slack, its rounds of tool calls shown as tasks.
        When Slack refused the start, nothing is in it and the answer comes back `whole`, to
        be posted whole. A SlackError: the reply could not be finished for certain; the claim
        stays owed."""
        writer = StreamWriter(
            slack=self._slack,
            engine=self._engine,
            poster=self._poster,
            claim=claim,
            recipient=recipient,
        )
        safe, written = SafeText(), []
        live = True  # Slack takes the stream (until it refuses its start)
        answer = self._loop.stream(messages, asker=asker, progress=self._progress(writer, claim))
        try:
            async with aclosing(answer) as pieces:
                async for piece in pieces:
                    written.append(piece)
                    started = bool(writer.messages)
                    live = live and await self._write(writer, safe.feed(piece))
                    if not started and writer.messages and live:
                        await self._words_shown(claim)
            live = live and await self._write(writer, safe.flush())
        except LLMError as error:
            if not writer.messages or not live:
                return Streamed(failure=str(error), nothing_written=True)
            logger.error("the model broke off mid-stream: %s", error)
            writer.failure = str(error)
            await writer.write(safe.flush() + CUT_OFF_NOTE)
        if live and writer.failure is None and writer.messages and not "".join(written).strip():
            # The tools' tasks started a message, and the model then said nothing.
            writer.failure = "the model answered nothing after its tools"
            await writer.write(CUT_OFF_NOTE.strip())
        if not live:
            return Streamed(whole="".join(written), nothing_written=True)
        if not await self._write(writer, None) or not writer.posted:
            # Refused, or nothing readable was written: posted whole (or the apology).
            return Streamed(whole="".join(written), nothing_written=True)
        return Streamed(writer.posted, failure=writer.failure)

    async def _write(self, writer: StreamWriter, text: str | None) -> bool:
        """Write `text` (None: finish); False when Slack refused to start the stream."""
        try:
            if text is None:
                await writer.finish()
            elif text:
                await writer.write(text)
        except StartRefused as refusal:
            self._refusal(refusal.error)
            return False
        return True

    def _progress(self, writer: StreamWriter, claim: Claim) -> Progress:
        """The tools' progress as task chunks in the reply's message, or, where Slack takes
        none, as the thread's status (the refusal logged once)."""
        status = thread_status(self._slack, claim)

        async def show(tasks: list[Task]) -> None:
            if self._tasks_refused is None:
                try:
                    if await writer.show_tasks([task_chunk(t) for t in tasks]):
                        return
                    refusal = "an append with task chunks failed"
                except StartRefused as error:
                    refusal = str(error)
                self._tasks_refused = refusal
                logger.warning("Slack took no task chunks (%s): tools show as a status", refusal)
            await status(tasks)

        return show

    async def resume(self, claim: Claim, write_again: WriteAgain) -> list[str]:
        """Finish a streamed reply a stopped process or a failed call left: the same messages
        get their whole text (the reply written again when the model had not finished it), and
        what is missing is posted; nothing is started again. A SlackError: still owed."""
        writer = StreamWriter(
            slack=self._slack,
            engine=self._engine,
            poster=self._poster,
            claim=claim,
            recipient=(None, None),
        )
        chunks = claim.chunks
        if chunks is None:
            chunks = await self._rewrite(claim, write_again)
            await store_stream(self._engine, claim.id, writer.messages, chunks=chunks)
        for number, message in enumerate(writer.messages):
            ts = message.get("ts") or await writer.find_start(message)
            if not ts:
                continue  # never in Slack: posted below with the rest
            # A message the reply written again no longer fills is closed all the same.
            text = chunks[number] if number < len(chunks) else "…"
            await writer.settle(str(ts), number, text, last=number == len(chunks) - 1)
            await self._poster.store(claim, str(ts), text)
        done = await self._poster.post(claim, chunks, look_first=True)
        if done.error is not None:
            raise done.error
        return done.posted

    async def _rewrite(self, claim: Claim, write_again: WriteAgain) -> list[str]:
        """The whole reply, written again (not streamed), in streamed messages' sizes."""
        try:
            text = await write_again(claim)
        except LLMError as error:
            logger.error("the reply could not be written again: %s", error)
            text = CUT_OFF_NOTE.strip()
        safe = SafeText()
        rest = safe.feed(text) + safe.flush()
        chunks: list[str] = []
        while rest.strip():
            head, rest = split_for_stream(rest, limit=MESSAGE_LIMIT)
            chunks.append(head)
        return chunks or [CUT_OFF_NOTE.strip()]

    async def _words_shown(self, claim: Claim) -> None:
        """The first words are in Slack: "on it" ends (the thread's status, or the reaction
        of a DM answered at its top level; app.conversation.reply.on_it clears it again, harmlessly,
        when the job ends)."""
        try:
            if claim.thread_ts:
                await self._slack.set_thread_status(
                    channel=claim.channel, thread_ts=claim.thread_ts, status=""
                )
            else:
                await self._slack.remove_reaction(
                    channel=claim.channel, ts=claim.trigger_ts, name=REACTION_NAME
                )
        except SlackError as error:
            logger.info("'on it' not taken down yet: %s", error)

    def _refusal(self, error: SlackError) -> None:
        if refused_everywhere(error):
            self._refused = str(error)
            logger.warning("Slack refused to stream (%s): replies are posted whole from now", error)
        else:
            logger.info("Slack refused to stream this reply (%s): it is posted whole", error)
