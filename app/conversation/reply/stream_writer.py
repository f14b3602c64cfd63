"""Writing a reply into Slack as it arrives (docs/how-tomo-works.md#streaming): the messages of
one claim, each started, appended to in batches and stopped; their state kept in the claim.

- The first text starts a message at once; later text is appended at most once every
  APPEND_EVERY_SECONDS (chat.appendStream is Tier 4, 100+ calls a minute per app and
  workspace) and whatever is left goes with the stop.
- Before each start the claim records that a message is being started, and its `ts` as soon
  as Slack answers: a restart finds the message again instead of starting a second one. A
  start Slack answered uncertainly is looked up (tomo's own message after the one answered,
  beginning with the same text) before it is tried again.
- A message reaching MESSAGE_LIMIT is stopped and the reply continues in a next one.
- An append Slack refused or left uncertain is not tried again: the message is finished with
  its whole text by chat.update. Every stop carries the claim's metadata (app.conversation.
  posting), so the message counts as that part of the reply wherever it is looked up.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import Any

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.conversation.claims.taking import Claim
from app.conversation.reply.posting import Poster, metadata
from app.conversation.reply.stream_text import split_for_stream
from app.db.models import Reply
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError
from app.slack.web.streams import MessageStream, rewrite

logger = logging.getLogger(__name__)

APPEND_EVERY_SECONDS = 1.0
MESSAGE_LIMIT = 12_000  # markdown_text's limit per call, and tomo's per streamed message
START_ATTEMPTS = 3
LOOKUP_PAUSE_SECONDS = 0.5


class StartRefused(Exception):
    """Slack refused the reply's first start for certain: nothing is in Slack, post whole."""

    def __init__(self, error: SlackError) -> None:
        super().__init__(str(error))
        self.error = error


class StreamWriter:
    def __init__(
        self,
        *,
        slack: SlackClient,
        engine: AsyncEngine,
        poster: Poster,
        claim: Claim,
        recipient: tuple[str | None, str | None],
    ) -> None:
        self._slack, self._engine, self._poster, self._claim = slack, engine, poster, claim
        self._recipient = recipient  # (user id, team id)
        self.messages: list[dict[str, Any]] = list(claim.stream or [])
        self.posted: list[str] = []
        self._current: MessageStream | None = None
        self._sent = ""  # the current message's text in Slack
        self._pending = ""  # written, not yet sent
        self._broken = False  # an append failed: the whole text goes in at the stop
        self._appended_at = 0.0
        self.failure: str | None = None  # the model broke off (its note ends the reply)
        self.refused = False  # Slack refused a start of this reply: it may be posted whole

    async def write(self, text: str) -> None:
        self._pending += text
        while len(self._sent) + len(self._pending) > MESSAGE_LIMIT:
            head, rest = split_for_stream(self._pending, limit=MESSAGE_LIMIT - len(self._sent))
            self._pending = head
            await self._finish_message(last=False)
            self._pending = rest
        if self._current is None:
            if self._pending.strip():
                await self._start()
        elif not self._broken and time.monotonic() - self._appended_at >= APPEND_EVERY_SECONDS:
            await self._append()

    async def show_tasks(self, chunks: list[dict[str, Any]]) -> bool:
        """Slack's task chunks (what the tools are doing) in the reply's message, sent at once
        with the text written before them; a message is started with them when none is yet.
        False when Slack refused them (the text stays to be sent); StartRefused when Slack
        refused to start the message at all. A start left uncertain raises SlackError."""
        if self._current is None:
            if self.refused:
                return False  # the reply may be posted whole: no message started for tasks
            await self._start(chunks=chunks)
            return True
        if self._broken:
            return False  # the message is finished by chat.update: no more appends
        text, self._pending = self._pending, ""
        try:
            await self._current.append(text, chunks=chunks)
        except SlackError as error:
            logger.info("task chunks of claim %d not shown: %s", *self._of(error))
            self._pending = text + self._pending
            return False
        self._sent += text
        self._appended_at = time.monotonic()
        return True

    async def finish(self) -> list[str]:
        """Stop the last message with what is left; the ts of every message, in order."""
        await self._finish_message(last=True)
        return self.posted

    # -- one message ----------------------------------------------------------------------

    async def _start(self, *, chunks: list[dict[str, Any]] | None = None) -> None:
        text, self._pending = self._pending, ""
        message: dict[str, Any] = {"ts": None, "text": text}
        self.messages.append(message)
        await self._store()
        thread_ts, (user, team) = self._claim.thread_ts, self._recipient
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                self._current = await MessageStream.start(
                    self._slack,
                    channel=self._claim.channel,
                    thread_ts=thread_ts,
                    recipient_user_id=user,
                    recipient_team_id=team,
                    text=text,
                    chunks=chunks,
                )
                break
            except SlackError as error:
                if not error.uncertain and len(self.messages) == 1:
                    self.messages.clear()  # nothing of the reply is in Slack: posted whole
                    self.refused = True
                    await self._store()
                    raise StartRefused(error) from error
                if not error.uncertain:
                    raise  # a later part refused: owed, finished by the next to take it
                logger.warning(
                    "stream start of claim %d may have gone through: %s", *self._of(error)
                )
                await asyncio.sleep(LOOKUP_PAUSE_SECONDS)
                found = await self.find_start(message)
                if found is not None:
                    logger.info("stream start of claim %d is in Slack as %s", self._claim.id, found)
                    self._current = MessageStream(
                        self._slack, channel=self._claim.channel, ts=found
                    )
                    break
                if attempt == START_ATTEMPTS:
                    raise
        assert self._current is not None and self._current.ts
        message["ts"] = self._current.ts
        await self._store()
        self._sent, self._broken = text, False
        self._appended_at = time.monotonic()

    async def _append(self) -> None:
        assert self._current is not None
        text, self._pending = self._pending, ""
        try:
            await self._current.append(text)
            self._sent += text
        except SlackError as error:
            logger.warning("appending to the stream of claim %d failed: %s", *self._of(error))
            self._pending, self._broken = text, True  # it goes in with the whole text
        self._appended_at = time.monotonic()

    async def _finish_message(self, *, last: bool) -> None:
        if self._current is None and self._pending.strip():
            await self._start()
        if self._current is None or self._current.ts is None:
            return
        number, ts = len(self.messages) - 1, self._current.ts
        whole = self._sent + self._pending
        self.messages[-1]["text"] = whole
        await self._store(done=last)
        stopped = False
        if not self._broken:
            try:
                await self._stop(number, last=last)
                stopped = True
            except SlackError as error:
                logger.warning("stopping the stream of claim %d failed: %s", *self._of(error))
        if not stopped:
            await self.settle(ts, number, whole, stop=not self._broken, last=last)
        await self._poster.store(self._claim, ts, whole)
        self.posted.append(ts)
        self._current, self._sent, self._pending, self._broken = None, "", "", False

    async def _stop(self, number: int, *, last: bool) -> None:
        """Stop the current message; the reply's last with the feedback buttons, stopped again
        without them when Slack refused them (a refusal is certain: it is still streaming)."""
        current = self._current
        assert current is not None
        buttons = self._poster.buttons
        await buttons.sent(
            buttons.for_stop(self._claim.id) if last else None,
            lambda blocks: current.stop(
                self._pending, metadata=metadata(self._claim, number), blocks=blocks
            ),
        )

    async def settle(
        self, ts: str, number: int, whole: str, *, stop: bool = True, last: bool = False
    ) -> None:
        """Finish message `number` with its whole text, whatever state it was left in: stopped
        if it still streams, then rewritten (chat.update) with its metadata, and the reply's
        `last` message with the feedback buttons. A SlackError here means it may not be
        finished: the claim stays owed."""
        if stop:
            try:
                await MessageStream(self._slack, channel=self._claim.channel, ts=ts).stop(
                    "", metadata=None
                )
            except SlackError as error:
                logger.info("stream %s of claim %d was not stopped: %s", ts, self._claim.id, error)
        buttons = self._poster.buttons
        await buttons.sent(
            buttons.for_rewrite(self._claim.id, whole) if last else None,
            lambda blocks: rewrite(
                self._slack,
                channel=self._claim.channel,
                ts=ts,
                text=whole,
                metadata=metadata(self._claim, number),
                blocks=blocks,
            ),
        )

    async def find_start(self, message: dict[str, Any]) -> str | None:
        """The ts of the message a start may have made: tomo's own, newer than the message
        answered, not known as another part of a reply, beginning with the start's text.
        A SlackError: it cannot be told."""
        me = self._poster.identity.me()
        known = {m.get("ts") for m in self.messages}
        found = await self._slack.messages_after(
            channel=self._claim.channel,
            thread_ts=self._claim.thread_ts,
            after_ts=self._claim.trigger_ts,
        )
        for candidate in found:
            if candidate.get("user") != me.user_id or candidate.get("ts") in known:
                continue
            if candidate.get("metadata"):
                continue  # a finished part of a reply (this claim's or another's)
            if _words(str(candidate.get("text") or "")).startswith(_words(message["text"])[:40]):
                return str(candidate["ts"])
        return None

    # -- bookkeeping ----------------------------------------------------------------------

    def _of(self, error: SlackError) -> tuple[int, SlackError]:
        return self._claim.id, error

    async def _store(self, *, done: bool = False) -> None:
        chunks = [str(m["text"]) for m in self.messages] if done else None
        await store_stream(
            self._engine, self._claim.id, self.messages, chunks=chunks, error=self.failure
        )


def _words(text: str) -> str:
    return "".join(re.findall(r"\w+", text))


async def store_stream(
    engine: AsyncEngine,
    claim_id: int,
    stream: list[dict[str, Any]],
    *,
    chunks: list[str] | None = None,
    error: str | None = None,
) -> None:
    """A streamed reply's messages so far (before each start, and once Slack answered it),
    and its whole messages once the model has finished (`chunks`): what a restart needs to
    finish the same messages (app.conversation.claims.taking reads it back as Claim.stream). A
    claim with a stream counts as one whose posting has begun; one with none (its start
    refused) as one that has posted nothing."""
    stored = {"messages": chunks, "model_failure": error, "stream": stream}
    value = json.dumps(stored, ensure_ascii=False) if stream or chunks else None
    async with engine.begin() as connection:
        await connection.execute(
            update(Reply).where(col(Reply.id) == claim_id).values(chunks=value, error=error)
        )
