"""Restarts lose nothing (docs/how-tomo-works.md#restarts): the database says which conversations
still wait.

At start-up (and after the job worker's restart) claims left `claimed` are interrupted, then
each conversation's timer is given back, read from what was stored within MAX_MESSAGE_AGE_SECONDS:
- a reply whose posting had begun (or whose post Slack may or may not have) is finished by the
  conversation's next reply job, which looks its posts up in Slack first;
- a conversation's newest turn is owed a reply, a judgment, or the reply a judgment decided on,
  unless a reply answered it or held it in its prompt (`skipped`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.conversation.claims import ending, taking
from app.conversation.claims.status import NOT_SPOKEN, OWED, UNFINISHED
from app.conversation.timing.policy import TimerPolicy
from app.db.models import Judgment, Message, Reply
from app.db.poison import without_poison
from app.domain import ReplyReason, RouteKind
from app.slack.kinds import MessageKind

logger = logging.getLogger(__name__)

Conversation = tuple[str, str]  # (channel, thread_ts)


def reply_reason(message: Message) -> ReplyReason:
    """Why a message routed to a reply is answered, as routing decided it (rows stored before
    the reason was kept: a DM or a mention)."""
    try:
        return ReplyReason(message.reply_reason or "")
    except ValueError:
        return ReplyReason.DM if message.channel_type == "im" else ReplyReason.MENTION


@dataclass(frozen=True)
class OwedReply:
    channel: str
    thread_ts: str
    latest_ts: str
    run_at: float
    reason: ReplyReason


@dataclass(frozen=True)
class OwedJudgment:
    channel: str
    thread_ts: str
    latest_ts: str
    run_at: float
    follow_up: bool


Owed = OwedReply | OwedJudgment


@dataclass(frozen=True)
class Stored:
    """What the database holds of the last MAX_MESSAGE_AGE_SECONDS."""

    newest: dict[Conversation, Message]  # each conversation's newest turn routed somewhere
    judged: dict[tuple[str, str, str], Judgment]  # by (channel, thread_ts, latest_ts)
    replies: Sequence[Reply]

    @cached_property
    def answered(self) -> set[tuple[str, str, str]]:
        """The messages a finished claim answered; one cut short before it was posted is owed
        still (its claim can be taken over)."""
        return {(r.channel, r.thread_ts, r.trigger_ts) for r in self.replies if _finished(r)}

    @cached_property
    def held(self) -> dict[Conversation, float]:
        """Per conversation, the newest message a reply's prompt held (app.conversation.
        answered): one that came while tomo wrote is owed still, though tomo's post came after
        it."""
        held: dict[Conversation, float] = {}
        for r in self.replies:
            if _finished(r) and (r.status not in NOT_SPOKEN or r.posted_ts):
                where = (r.channel, r.thread_ts)
                held[where] = max(held.get(where, 0.0), float(r.trigger_ts))
        return held


def _finished(reply: Reply) -> bool:
    return reply.status not in UNFINISHED


async def read_stored(session: AsyncSession, *, since: float, now: float) -> Stored:
    # A conversation's newest message is its newest turn: a note (a join, a topic), a
    # message with nothing to read, or a post of tomo's or another bot's (stored, routed
    # nowhere) never hides the message still owed a judgment or a reply.
    rows = await session.exec(
        select(Message)
        .where(Message.created_at >= since, Message.deleted == False)  # noqa: E712
        .where(Message.kind == MessageKind.CONVERSATIONAL.value, Message.text != "")
        .order_by(Message.ts)  # type: ignore[arg-type]
    )
    newest: dict[Conversation, Message] = {}
    for row in without_poison(rows.all(), now=now):
        if row.route != RouteKind.RECORD.value:
            newest[(row.channel, row.conversation_ts)] = row
    decisions = await session.exec(select(Judgment).where(Judgment.decided_at >= since))
    replies = await session.exec(select(Reply).where(Reply.created_at >= since))
    return Stored(
        newest=newest,
        judged={(j.channel, j.thread_ts, j.latest_ts): j for j in decisions.all()},
        replies=replies.all(),
    )


def begun(stored: Stored, *, now: float) -> list[OwedReply]:
    """Owed claims whose messages were stored: posting may have begun."""
    return [
        OwedReply(r.channel, r.thread_ts, r.trigger_ts, now, taking.reason_of(r))
        for r in stored.replies
        if r.status in OWED and r.chunks is not None
    ]


def owed(
    message: Message,
    decision: Judgment | None,
    *,
    now: float,
    min_wait: float,
    follow_up_wait: float,
) -> Owed | None:
    """What a conversation's newest turn is owed, by its route: a reply now, or what its
    judgment calls for."""
    match message.route:
        case RouteKind.REPLY:
            reason = reply_reason(message)
            return OwedReply(message.channel, message.conversation_ts, message.ts, now, reason)
        case RouteKind.JUDGMENT | RouteKind.FOLLOW_UP:
            wait = follow_up_wait if message.route == RouteKind.FOLLOW_UP else min_wait
            return after_judgment(message, decision, now=now, wait=wait)
        case _:
            return None


def after_judgment(
    message: Message, decision: Judgment | None, *, now: float, wait: float
) -> Owed | None:
    """A judgment `wait` seconds after the message (a follow-up's wait, or the quiet wait),
    until one was made; then the reply it decided on, or nothing (it decided not to speak)."""
    channel, thread_ts = message.channel, message.conversation_ts
    if decision is None:
        follow_up = message.route == RouteKind.FOLLOW_UP
        run_at = max(now, message.created_at + wait)
        return OwedJudgment(channel, thread_ts, message.ts, run_at, follow_up)
    if decision.should_respond and decision.reply_at is not None:
        reason = ReplyReason.FOLLOW_UP if decision.follow_up else ReplyReason.JUDGMENT
        return OwedReply(channel, thread_ts, message.ts, max(now, decision.reply_at), reason)
    return None


def skipped(message: Message, stored: Stored) -> str | None:
    """Why a conversation's newest turn is owed nothing whatever its route, or None."""
    if (message.channel, message.conversation_ts, message.ts) in stored.answered:
        return "answered"
    if float(message.ts) <= stored.held.get((message.channel, message.conversation_ts), 0.0):
        return "held by a reply's prompt"
    return None


async def set_timer(timer_policy: TimerPolicy, owed: Owed) -> None:
    """The timer, unless one is there already (another instance's, with several)."""
    match owed:
        case OwedReply():
            await timer_policy.schedule_reply(
                channel=owed.channel,
                thread_ts=owed.thread_ts,
                run_at=owed.run_at,
                latest_ts=owed.latest_ts,
                reason=owed.reason,
                replace=False,
            )
        case OwedJudgment():
            await timer_policy.schedule_judgment(
                channel=owed.channel,
                thread_ts=owed.thread_ts,
                latest_ts=owed.latest_ts,
                run_at=owed.run_at,
                follow_up=owed.follow_up,
                replace=False,
            )


async def restore_timers(
    session: AsyncSession,
    timer_policy: TimerPolicy,
    *,
    min_wait: float,
    follow_up_wait: float = 0.0,
    max_age: float,
    now: float | None = None,
    replying: set[Conversation] | None = None,
) -> int:
    """Give every conversation still awaiting a judgment or a reply its timer back; one whose
    timer is still there (another instance's, with several) keeps it. `replying`: the
    conversations whose reply runs now, somewhere: their claims are not left over."""
    now = time.time() if now is None else now
    interrupted = await ending.interrupt_unfinished(session, keep=replying or set())
    if interrupted:
        logger.warning("%d reply(ies) were cut short by the last stop", interrupted)
    stored = await read_stored(session, since=now - max_age, now=now)
    timers: list[Owed] = list(begun(stored, now=now))
    for message in stored.newest.values():
        why = skipped(message, stored)
        if why is not None:
            logger.debug("nothing owed to message %s: %s", message.ts, why)
            continue
        decision = stored.judged.get((message.channel, message.conversation_ts, message.ts))
        timer = owed(message, decision, now=now, min_wait=min_wait, follow_up_wait=follow_up_wait)
        if timer is not None:
            timers.append(timer)
    for timer in timers:
        await set_timer(timer_policy, timer)
    logger.info("restored %d timers from the database", len(timers))
    return len(timers)
