"""The reply job (docs/how-tomo-works.md#reply): rebuild the context, ask the model, post once,
store the post."""

from __future__ import annotations

import contextlib
import logging
import unicodedata
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.assistant.titles import title_thread
from app.conversation.answered import answered_through
from app.conversation.claims import ending, taking
from app.conversation.claims.status import ReplyStatus
from app.conversation.claims.taking import Claim
from app.conversation.job import ConversationJob, JobParts
from app.conversation.reply.on_it import OnIt
from app.conversation.reply.posting import Poster
from app.conversation.reply.prompt import Turns, reply_messages, turn_messages
from app.conversation.reply.streaming import StreamedReplies
from app.conversation.reply.thread_history import ThreadHistory
from app.conversation.reply.tool_loop import ToolLoop
from app.conversation.reply.tool_progress import asker_for, thread_status
from app.conversation.reply.words import apology, language_answered
from app.conversation.skips import newest_human, reply_skip
from app.domain import Context, ReplyReason
from app.jobs.kinds import JobKind
from app.llm import LLMError
from app.recording.recorder import Recorder
from app.slack.mrkdwn import format_reply
from app.slack.web.client import SlackClient

logger = logging.getLogger(__name__)

# Characters that show nothing on their own: Markdown/mrkdwn markup and quote marks.
_MARKUP = frozenset("*_~`>#-=|[](){}")


def usable(answer: str) -> bool:
    """Whether a model's answer has anything to read: not empty, not only whitespace,
    invisible characters (zero-width spaces, ...) or Markdown markup."""
    return any(
        not (ch.isspace() or ch in _MARKUP or unicodedata.category(ch) in ("Cf", "Cc"))
        for ch in answer
    )


class ReplyService(ConversationJob):
    def __init__(
        self,
        parts: JobParts,
        *,
        engine: AsyncEngine,
        slack: SlackClient,
        history: ThreadHistory,
        recorder: Recorder,
        history_limit: int,
        streaming: bool = False,
        api_url: str = "",
        tools: ToolLoop | None = None,
        on_it: OnIt | None = None,
    ) -> None:
        """`on_it`: the sign this process puts up when a job asks for it (the job worker's)."""
        super().__init__(JobKind.REPLY, parts)
        self._on_it = on_it
        self._engine = engine
        self._slack = slack
        self._history = history
        self._limit = history_limit
        self._poster = Poster(slack=slack, recorder=recorder, identity=parts.identity)
        # The model's answer, after the rounds of tool calls it asks for (none: no tools).
        self._loop = tools or ToolLoop(llm=parts.llm, toolbox=None, max_rounds=0)
        self._streams = StreamedReplies(
            enabled=streaming,
            api_url=api_url,
            slack=slack,
            engine=engine,
            poster=self._poster,
            loop=self._loop,
        )

    async def run(
        self,
        *,
        channel: str,
        thread_ts: str,
        latest_ts: str = "",
        reason: ReplyReason | str = ReplyReason.JUDGMENT,
        on_it: bool = False,
    ) -> list[str]:
        """Answer the conversation; returns the ts of what was posted (empty when nothing).
        `on_it`: the "on it" sign goes up here meanwhile, as the process that keeps the timers
        asked (app.conversation.reply.on_it)."""
        why = ReplyReason(reason)  # a string when it came from the job worker's socket
        sign: AbstractAsyncContextManager[None] = contextlib.nullcontext()
        if on_it and self._on_it is not None:
            sign = self._on_it.during(channel, thread_ts, latest_ts, reason=why)
        async with sign:
            return await self._guarded(
                channel,
                thread_ts,
                lambda: self._reply(channel, thread_ts, latest_ts, why),
                nothing=[],
            )

    async def _reply(
        self, channel: str, thread_ts: str, latest_ts: str, reason: ReplyReason
    ) -> list[str]:
        resumed = await self._resume(channel, thread_ts)
        if thread_ts and latest_ts != thread_ts:
            # (A top-level mention's own new thread has nothing in Slack to fetch yet.)
            await self._history.refresh(channel=channel, thread_ts=thread_ts)
        context = await self._context(channel, thread_ts)
        async with self._engine.connect() as connection:
            answered = await answered_through(connection, channel=channel, thread_ts=thread_ts)
        skip = reply_skip(context, latest_ts=latest_ts, reason=reason, answered_ts=answered)
        trigger = newest_human(context)
        if skip is not None or trigger is None:
            logger.info("reply skipped: %s", skip)
            return resumed
        async with self._voice.turn(
            channel=channel, thread_ts=thread_ts, trigger_ts=trigger.ts, reason=reason
        ) as turn:
            if (
                not turn.allowed
            ):  # own-voice limits (app.conversation.voice.own_voice); logged there
                return resumed
            claim = await taking.claim(
                self._engine,
                channel=channel,
                thread_ts=thread_ts,
                trigger_ts=trigger.ts,
                reason=reason,
                connection=turn.connection,
            )
        if claim is None:
            logger.info("reply skipped: message %s was already answered", trigger.ts)
            return resumed
        async with self._held(claim):
            posted = await self._answer(claim, context)
        if posted:
            await title_thread(
                self._slack,
                self._engine,
                channel=channel,
                thread_ts=thread_ts,
                reason=reason,
                claim_id=claim.id,
            )
        return resumed + posted

    async def _resume(self, channel: str, thread_ts: str) -> list[str]:
        """Finish the conversation's owed claims that had begun posting (after a restart, or
        an uncertain post): what Slack has already is found by its metadata, not posted again."""
        posted: list[str] = []
        for claim_id in await taking.owed(self._engine, channel=channel, thread_ts=thread_ts):
            claim = await taking.take_over(self._engine, claim_id)
            if claim is None or (claim.chunks is None and claim.stream is None):
                continue
            logger.info("resuming the reply of claim %d (message %s)", claim.id, claim.trigger_ts)
            async with self._held(claim):
                posted += await self._finish_begun(claim)
        return posted

    async def _finish_begun(self, claim: Claim) -> list[str]:
        """A claim taken over after posting (or streaming) may have begun."""
        if claim.stream is not None:
            return await self._streams.finish_left(claim, self._write_again)
        assert claim.chunks is not None
        return await self._deliver(claim, claim.chunks, look_first=True)

    async def _write_again(self, claim: Claim) -> str:
        """A claim's whole reply written again from current data, its tools run again."""
        context = await self._context(claim.channel, claim.thread_ts)
        messages = await self._prompt(claim, context)
        asker = asker_for(claim, context, team_id=self._identity.team_id)
        return await self._loop.complete(messages, asker=asker)

    def _held(self, claim: Claim) -> AbstractAsyncContextManager[None]:
        return ending.held(
            self._engine, claim.id, in_flight=lambda: self._poster.in_flight(claim.id)
        )

    async def _answer(self, claim: Claim, context: Context) -> list[str]:
        if claim.chunks is not None or claim.stream is not None:  # taken over: posting began
            return await self._finish_begun(claim)
        messages = await self._prompt(claim, context)
        asker = asker_for(claim, context, team_id=self._identity.team_id)
        failure: str | None = None
        answer: str | None = None  # the model's text (streaming refused: already written)
        if self._streams.wanted(claim):
            trigger = newest_human(context)
            recipient = (trigger.user_id if trigger else None, self._identity.team_id)
            streamed = await self._streams.answer(claim, messages, recipient=recipient, asker=asker)
            if not streamed.nothing_written:
                return streamed.posted
            failure, answer = streamed.failure, streamed.whole
        try:
            if failure is None and answer is None:
                progress = thread_status(self._slack, claim)
                answer = await self._loop.complete(messages, asker=asker, progress=progress)
        except LLMError as error:
            failure = str(error)
        if failure is None and answer is not None:
            chunks = format_reply(answer)
            if not chunks or not usable(answer):
                failure = f"unusable answer: {answer[:80]!r}"
        if failure is not None:
            logger.error("no reply: %s", failure)
            if not claim.reason.asked:
                await ending.settle(self._engine, claim, status=ReplyStatus.FAILED, error=failure)
                return []
            chunks = format_reply(apology(language_answered(context, claim.trigger_ts)))
        await ending.store_chunks(self._engine, claim.id, chunks, error=failure)
        return await self._deliver(replace(claim, error=failure), chunks, look_first=False)

    async def _prompt(self, claim: Claim, context: Context) -> list[dict[str, Any]]:
        """The prompt of the claim's reply: the conversation up to its message, with what
        tomo said meanwhile for an earlier message (never this reply's own messages)."""
        async with self._engine.connect() as connection:
            answered = await answered_through(
                connection,
                channel=claim.channel,
                thread_ts=claim.thread_ts,
                before=claim.trigger_ts,
            )
        mine = frozenset(str(m["ts"]) for m in claim.stream or () if m.get("ts"))
        shown = Turns(
            claim.trigger_ts,
            self._limit,
            bool(claim.thread_ts),
            answered_ts=answered,
            mine=mine,
        )
        # The images of the turns, the newest first, then its lead-in's (Context.lead_in).
        turns = turn_messages(context.target_turns(), shown)
        pictured = (*reversed(turns), *reversed(context.lead_in()))
        context = await self._with_files(context, purpose="reply", pictured=pictured)
        return reply_messages(context, shown)

    async def _deliver(self, claim: Claim, chunks: list[str], *, look_first: bool) -> list[str]:
        done = await self._poster.post(claim, chunks, look_first=look_first)
        if done.error is None:
            # An apology answers the person, but the claim records that the model failed.
            status, error = (ReplyStatus.FAILED if claim.error else ReplyStatus.POSTED), claim.error
            logger.info("replied with %d message(s): %s", len(done.posted), ",".join(done.posted))
        elif done.error.rate_limited or done.error.token_refused:
            # Slack posted nothing: owed still, for the next start or reply here (a refused
            # token: once Slack takes it again, app.wiring.reinstall).
            status, error = ReplyStatus.INTERRUPTED, str(done.error)
            logger.error("posting the reply was refused for now; it stays owed: %s", error)
        elif done.error.uncertain:
            status, error = ReplyStatus.UNCERTAIN, str(done.error)
            logger.error("posting the reply is unsettled (looked up before any retry): %s", error)
        else:
            status, error = ReplyStatus.FAILED, str(done.error)
            logger.error("posting the reply failed: %s", error)
        await ending.settle(self._engine, claim, status=status, error=error, posted=done.posted)
        return done.posted
