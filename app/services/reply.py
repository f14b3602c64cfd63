"""The reply job (SPEC §3.5): rebuild the context, ask the model, post once, store the post."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.messages import store_messages
from app.domain import ChatMessage, Context
from app.jobs.timers import REPLY
from app.llm import LLM, LLMError
from app.prompts import render
from app.services import claims
from app.services.context import ContextBuilder, Learn
from app.services.history import ThreadHistory
from app.services.identity import Identity
from app.services.locks import ConversationLocks
from app.services.voice import OwnVoice
from app.slack.client import SlackClient, SlackError
from app.slack.events import IncomingMessage
from app.slack.mrkdwn import format_reply

logger = logging.getLogger(__name__)

APOLOGY = "ごめんなさい、今はうまく答えられません。少ししてからもう一度話しかけてください。\n(Sorry, I can't answer right now. Please try again in a moment.)"  # noqa: E501
DIRECT = frozenset({"mention", "dm", "auto_reply"})


def conversation_turns(
    messages: tuple[ChatMessage, ...], *, trigger_ts: str, limit: int, threaded: bool
) -> list[dict[str, str]]:
    """The conversation as chat turns, oldest first, ending with the message answered: a
    thread's parent, then the `limit` most recent messages before the trigger, then the trigger.
    tomo's own messages are the assistant's, everyone else's start with <@USER_ID>."""
    before = [m for m in messages if float(m.ts) < float(trigger_ts)]
    answered = [m for m in messages if m.ts == trigger_ts]
    parent: list[ChatMessage] = []
    if threaded and before and not before[0].thread_ts:
        parent, before = before[:1], before[1:]
    chosen = parent + before[-limit:] + answered
    turns = []
    for message in chosen:
        if message.from_self:
            turns.append({"role": "assistant", "content": message.text})
            continue
        who = f"<@{message.user_id}>" if message.user_id else "(bot)"
        name = (
            f" ({message.author})" if message.author and message.author != message.user_id else ""
        )
        turns.append({"role": "user", "content": f"{who}{name}: {message.text}"})
    return turns


def newest_human(context: Context) -> ChatMessage | None:
    """The newest turn a person wrote (not tomo, not a bot, not Slackbot)."""
    for message in reversed(context.target_turns()):
        if not message.from_self and not message.from_bot:
            return message
    return None


def skip_reason(context: Context, *, latest_ts: str, reason: str) -> str | None:
    """Why there is nothing to answer, or None. A mention, DM or auto-reply answers the
    person's message that set the timer, or a newer one of theirs; a judgment's reply answers
    exactly the message judged."""
    turns = context.target_turns()
    trigger = newest_human(context)
    if trigger is None or turns[-1].from_self:
        return "nothing left to answer"
    if latest_ts and reason in DIRECT and float(trigger.ts) < float(latest_ts):
        return "the message to answer is gone, or not a person's"
    if latest_ts and reason not in DIRECT and trigger.ts != latest_ts:
        return "the conversation moved on since the judgment"
    if (
        not context.target_thread_ts
        and reason not in DIRECT
        and context.conversation_history.get_thread(trigger.ts)
    ):
        return "the message moved into its thread"
    return None


class ReplyService:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        sessions: async_sessionmaker[AsyncSession],
        builder: ContextBuilder,
        llm: LLM,
        slack: SlackClient,
        history: ThreadHistory,
        identity: Identity,
        locks: ConversationLocks,
        voice: OwnVoice,
        learn: Learn,
        history_limit: int,
    ) -> None:
        self._engine = engine
        self._sessions = sessions
        self._builder = builder
        self._llm = llm
        self._slack = slack
        self._history = history
        self._identity = identity
        self._locks = locks
        self._voice = voice
        self._learn = learn
        self._limit = history_limit

    async def run(
        self, *, channel: str, thread_ts: str, latest_ts: str = "", reason: str = "judgment"
    ) -> list[str]:
        """Answer the conversation; returns the ts of what was posted (empty when nothing)."""
        await self._identity.known.wait()  # who "tomo" is decides whose turns are whose
        async with self._locks.job(REPLY, channel, thread_ts):
            try:
                return await self._reply(channel, thread_ts, latest_ts, reason)
            except Exception:
                logger.exception("reply failed")
                return []

    async def _reply(self, channel: str, thread_ts: str, latest_ts: str, reason: str) -> list[str]:
        if thread_ts and latest_ts != thread_ts:
            # (A top-level mention's own new thread has nothing in Slack to fetch yet.)
            await self._history.refresh(channel=channel, thread_ts=thread_ts)
        async with self._sessions() as session:
            context = await self._builder.build_named(
                session,
                channel_id=channel,
                thread_ts=thread_ts,
                me=self._identity.me(),
                learn=self._learn,
            )
        skip = skip_reason(context, latest_ts=latest_ts, reason=reason)
        trigger = newest_human(context)
        if skip is not None or trigger is None:
            logger.info("reply skipped: %s", skip)
            return []
        async with self._voice.turn(
            channel=channel, thread_ts=thread_ts, trigger_ts=trigger.ts, reason=reason
        ) as allowed:
            if not allowed:  # own-voice limits (app.services.voice); logged there
                return []
            claim = await claims.claim(
                self._engine,
                channel=channel,
                thread_ts=thread_ts,
                trigger_ts=trigger.ts,
                reason=reason,
            )
        if claim is None:
            logger.info("reply skipped: message %s was already answered", trigger.ts)
            return []

        system = render("reply.j2", context=context)
        turns = conversation_turns(
            context.target_turns(),
            trigger_ts=trigger.ts,
            limit=self._limit,
            threaded=bool(thread_ts),
        )
        try:
            completion = await self._llm.complete(
                purpose="reply", messages=[{"role": "system", "content": system}, *turns]
            )
            chunks = format_reply(completion.text)
        except LLMError as error:
            logger.error("no reply: %s", error)
            chunks = format_reply(APOLOGY) if reason in DIRECT else []
            await claims.finish(self._engine, claim, status=claims.FAILED, error=str(error))
            if not chunks:
                return []
            return await self._post(channel, thread_ts, chunks, claim=None)
        if not chunks:
            await claims.finish(self._engine, claim, status=claims.FAILED, error="empty answer")
            return []
        return await self._post(channel, thread_ts, chunks, claim=claim)

    async def _post(
        self, channel: str, thread_ts: str, chunks: list[str], *, claim: int | None
    ) -> list[str]:
        posted: list[str] = []
        try:
            for chunk in chunks:
                # Shielded: once Slack has the post, it is stored even if the job is cancelled,
                # so a restart sees it was answered.
                ts = await asyncio.shield(self._post_one(channel, thread_ts, chunk))
                posted.append(ts)
        except SlackError as error:
            logger.error("posting the reply failed: %s", error)
            if claim is not None:
                await claims.finish(
                    self._engine, claim, status=claims.FAILED, error=str(error), posted=posted
                )
            return posted
        if claim is not None:
            await claims.finish(self._engine, claim, status=claims.POSTED, posted=posted)
        logger.info("replied with %d message(s): %s", len(posted), ",".join(posted))
        return posted

    async def _post_one(self, channel: str, thread_ts: str, text: str) -> str:
        ts = await self._slack.post_message(channel=channel, text=text, thread_ts=thread_ts or None)
        me = self._identity
        message = IncomingMessage(
            channel=channel,
            ts=ts,
            team_id=me.team_id or "",
            thread_ts=thread_ts,
            user_id=me.user_id,
            bot_id=me.bot_id,
            text=text,
            subtype=None,
            channel_type=None,
        )
        async with self._engine.begin() as connection:
            await store_messages(connection, [message])
        return ts
