"""The judgment job: should tomo join this conversation, and when? (docs/how-tomo-works.md,
"Judgment")"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from sqlalchemy.exc import IntegrityError
from sqlmodel import select

from app.conversation.answered import answered_through
from app.conversation.job import ConversationJob, JobParts
from app.conversation.judgment.answer import InvalidVerdict, Verdict, parse_verdict
from app.conversation.skips import judged_turn, judgment_skip
from app.db.models import Judgment
from app.domain import ChatMessage, Context, ReplyReason
from app.jobs.kinds import JobKind
from app.llm import LLMError, system_message, with_images
from app.llm.prompts import render, render_parts
from app.observability.metrics import JudgmentOutcome, count_judgment

logger = logging.getLogger(__name__)


def judgment_messages(context: Context, *, follow_up: bool = False) -> list[dict[str, Any]]:
    """The judgment's prompt: one system message (its stable start cacheable; a follow-up's
    says near its end that tomo takes part in the conversation), and, when the
    conversation's newest messages carry images the model can see, a user message showing
    them, newest first (app.files.reader chose them)."""
    prompt = render_parts("judgment.j2", context=context, follow_up=follow_up)
    messages = [system_message(prompt)]
    shown = [m for m in reversed(context.judged_messages()) if m.images]
    if shown:
        parts: list[dict[str, Any]] = [{"type": "text", "text": render("judgment_images.j2")}]
        for message in shown:
            parts += with_images(message.said(), message.images)
        messages.append({"role": "user", "content": parts})
    return messages


class Reacting(Protocol):
    async def add_reaction(self, *, channel: str, ts: str, name: str) -> None: ...


class JudgmentService(ConversationJob):
    def __init__(
        self,
        parts: JobParts,
        *,
        max_age: float,
        max_delay: float,
        slack: Reacting | None = None,
    ) -> None:
        """`slack`: what reacts to a closing follow-up ("thanks!"); None: no reactions."""
        super().__init__(JobKind.JUDGMENT, parts)
        self._max_age = max_age
        self._max_delay = max_delay
        self._slack = slack

    async def run(
        self, *, channel: str, thread_ts: str, latest_ts: str = "", reason: str | None = None
    ) -> Judgment | None:
        """Judge the conversation; returns the stored decision, None when skipped. Acting on
        it (a reply timer) is the caller's: `TimerPolicy.after_judgment`. `reason`
        "follow_up": a follow-up's judgment (docs/how-tomo-works.md#follow-ups)."""
        follow_up = reason == ReplyReason.FOLLOW_UP
        return await self._guarded(
            channel, thread_ts, lambda: self._judge(channel, thread_ts, follow_up), nothing=None
        )

    async def _judge(self, channel: str, thread_ts: str, follow_up: bool) -> Judgment | None:
        context = await self._context(channel, thread_ts)
        async with self._sessions() as session:
            connection = await session.connection()
            answered = await answered_through(connection, channel=channel, thread_ts=thread_ts)
        reason = judgment_skip(context, max_age=self._max_age, answered_ts=answered)
        # The newest turn; or a person's that came while tomo wrote, answered by no reply.
        newest = judged_turn(context, answered_ts=answered)
        if reason is None and newest is not None and await self._judged(channel, thread_ts, newest):
            reason = "already judged"
        if reason is not None or newest is None:
            logger.info("judgment skipped: %s", reason)
            return None
        if follow_up:
            limit = await self._voice.follow_up_limit(channel, thread_ts=thread_ts)
        else:
            limit = await self._voice.limit(channel)
        if limit is not None:
            # Decided without the model: no tokens spent, the limit is the reason.
            return await self._decided_without_model(
                channel, thread_ts, newest.ts, limit, follow_up=follow_up
            )

        pictured = tuple(reversed(context.judged_messages()))  # the newest first
        context = await self._with_files(context, purpose="judgment", pictured=pictured)
        decision = Judgment(
            channel=channel, thread_ts=thread_ts, latest_ts=newest.ts, follow_up=follow_up
        )
        verdict: Verdict | None = None
        try:
            completion = await self._llm.complete(
                purpose="judgment", messages=judgment_messages(context, follow_up=follow_up)
            )
            decision.model = completion.model
            decision.prompt_tokens = completion.prompt_tokens
            decision.completion_tokens = completion.completion_tokens
            verdict = parse_verdict(completion.text, max_delay=self._max_delay)
        except LLMError as error:
            decision.valid, decision.reason = False, f"model failed: {error}"
        except InvalidVerdict as error:
            decision.valid, decision.reason = False, f"invalid answer: {error}"
        now = time.time()
        decision.decided_at = now
        if verdict is not None:
            decision.should_respond = verdict.should_respond
            decision.reason = verdict.reason
            decision.confidence = verdict.confidence
            decision.delay_seconds = verdict.delay_seconds
            if verdict.should_respond:
                # A follow-up answers a person now: its delay is ignored.
                delay = 0.0 if follow_up else (verdict.delay_seconds or 0.0)
                decision.reply_at = now + delay
        if not await self._store(decision):
            return None
        outcome = JudgmentOutcome.RESPOND if decision.should_respond else JudgmentOutcome.NO_REPLY
        count_judgment(outcome if decision.valid else JudgmentOutcome.INVALID)
        logger.info(
            "judgment%s should_respond=%s valid=%s confidence=%s delay=%s reason=%s",
            " (follow-up)" * follow_up,
            decision.should_respond,
            decision.valid,
            decision.confidence,
            decision.delay_seconds,
            decision.reason,
        )
        if follow_up and verdict is not None and not verdict.should_respond and verdict.reaction:
            await self._react(decision, newest.ts, verdict.reaction)
        return decision

    async def _react(self, decision: Judgment, ts: str, name: str) -> None:
        """A closing follow-up acknowledged with a reaction, after the decision is stored
        (a conversation's message is judged once, so it is reacted to once), and written to
        the decision once Slack took it. A name Slack does not know, or any failure, costs
        nothing but a log line."""
        if self._slack is None:
            return
        try:
            await self._slack.add_reaction(channel=decision.channel, ts=ts, name=name)
        except Exception as error:
            logger.warning("could not react :%s: to %s: %s", name, ts, error)
            return
        logger.info("reacted :%s: to %s instead of replying", name, ts)
        try:
            async with self._sessions() as session:
                session.add(decision)
                decision.reaction = name
                await session.commit()
        except Exception:  # the reaction is in Slack; only the admin page misses it
            logger.exception("could not write down the reaction :%s: to %s", name, ts)

    async def _judged(self, channel: str, thread_ts: str, newest: ChatMessage) -> bool:
        async with self._sessions() as session:
            already = await session.exec(
                select(Judgment.id).where(
                    Judgment.channel == channel,
                    Judgment.thread_ts == thread_ts,
                    Judgment.latest_ts == newest.ts,
                )
            )
            return already.first() is not None

    async def _decided_without_model(
        self, channel: str, thread_ts: str, latest_ts: str, reason: str, *, follow_up: bool
    ) -> Judgment | None:
        decision = Judgment(
            channel=channel,
            thread_ts=thread_ts,
            latest_ts=latest_ts,
            follow_up=follow_up,
            decided_at=time.time(),
            should_respond=False,
            reason=reason,
            prompt_tokens=0,
            completion_tokens=0,
        )
        if not await self._store(decision):
            return None
        count_judgment(JudgmentOutcome.LIMITED)
        logger.info("judgment should_respond=False without the model: %s", reason)
        return decision

    async def _store(self, decision: Judgment) -> bool:
        try:
            async with self._sessions() as session:
                session.add(decision)
                await session.commit()
                await session.refresh(decision)
        except IntegrityError:
            logger.info("this message was judged meanwhile; keeping the first decision")
            return False
        return True
