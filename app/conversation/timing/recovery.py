"""Restarts lose nothing (docs/how-tomo-works.md#restarts): the database says which conversations
still wait."""

from __future__ import annotations

import logging
import time

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

# Routes whose message waits for a judgment: after the quiet wait, or a follow-up's.
JUDGED = (RouteKind.JUDGMENT.value, RouteKind.FOLLOW_UP.value)


def reply_reason(message: Message) -> ReplyReason:
    """Why a message routed to a reply is answered, as routing decided it (rows stored before
    the reason was kept: a DM or a mention)."""
    try:
        return ReplyReason(message.reply_reason or "")
    except ValueError:
        return ReplyReason.DM if message.channel_type == "im" else ReplyReason.MENTION


async def restore_timers(
    session: AsyncSession,
    timer_policy: TimerPolicy,
    *,
    min_wait: float,
    follow_up_wait: float = 0.0,
    max_age: float,
    now: float | None = None,
    replying: set[tuple[str, str]] | None = None,
) -> int:
    """Give every conversation still awaiting a judgment or a reply its timer back; one whose
    timer is still there (another instance's, with several) keeps it. `replying`: the
    conversations whose reply runs now, somewhere: their claims are not left over."""
    now = time.time() if now is None else now
    since = now - max_age
    interrupted = await ending.interrupt_unfinished(session, keep=replying or set())
    if interrupted:
        logger.warning("%d reply(ies) were cut short by the last stop", interrupted)
    # A conversation's newest message is its newest turn: a note (a join, a topic), a
    # message with nothing to read, or a post of tomo's or another bot's (stored, routed
    # nowhere) never hides the message still owed a judgment or a reply.
    rows = await session.exec(
        select(Message)
        .where(Message.created_at >= since, Message.deleted == False)  # noqa: E712
        .where(Message.kind == MessageKind.CONVERSATIONAL.value, Message.text != "")
        .order_by(Message.ts)  # type: ignore[arg-type]
    )
    newest: dict[tuple[str, str], Message] = {}
    for row in without_poison(rows.all(), now=now):
        if row.route != RouteKind.RECORD.value:
            newest[(row.channel, row.conversation_ts)] = row
    judged = {
        (j.channel, j.thread_ts, j.latest_ts): j
        for j in (await session.exec(select(Judgment).where(Judgment.decided_at >= since))).all()
    }
    replies = (await session.exec(select(Reply).where(Reply.created_at >= since))).all()
    # A reply cut short before it was posted is owed still (its claim can be taken over).
    answered = {
        (r.channel, r.thread_ts, r.trigger_ts) for r in replies if r.status not in UNFINISHED
    }
    # A message is answered once a reply's prompt held it (app.conversation.answered): one
    # that came while tomo wrote is owed still, though tomo's post came after it.
    held: dict[tuple[str, str], float] = {}
    for r in replies:
        if r.status not in UNFINISHED and (r.status not in NOT_SPOKEN or r.posted_ts):
            where = (r.channel, r.thread_ts)
            held[where] = max(held.get(where, 0.0), float(r.trigger_ts))
    restored = 0
    # One that had begun posting (or could not tell whether Slack has a post) is finished by
    # the conversation's next reply job, which looks its posts up in Slack first.
    for reply in replies:
        if reply.status in OWED and reply.chunks is not None:
            await timer_policy.schedule_reply(
                channel=reply.channel,
                thread_ts=reply.thread_ts,
                run_at=now,
                latest_ts=reply.trigger_ts,
                reason=taking.reason_of(reply),
                replace=False,
            )
            restored += 1
    for (channel, thread_ts), message in newest.items():
        key = (channel, thread_ts, message.ts)
        if key in answered or float(message.ts) <= held.get((channel, thread_ts), 0.0):
            continue
        if message.route == RouteKind.REPLY.value:
            reason = reply_reason(message)
            await timer_policy.schedule_reply(
                channel=channel,
                thread_ts=thread_ts,
                run_at=now,
                latest_ts=message.ts,
                reason=reason,
                replace=False,
            )
        elif message.route in JUDGED:
            decision = judged.get(key)
            follow_up = message.route == RouteKind.FOLLOW_UP.value
            if decision is None:
                wait = follow_up_wait if follow_up else min_wait
                await timer_policy.schedule_judgment(
                    channel=channel,
                    thread_ts=thread_ts,
                    latest_ts=message.ts,
                    run_at=max(now, message.created_at + wait),
                    follow_up=follow_up,
                    replace=False,
                )
            elif decision.should_respond and decision.reply_at is not None:
                await timer_policy.schedule_reply(
                    channel=channel,
                    thread_ts=thread_ts,
                    latest_ts=message.ts,
                    run_at=max(now, decision.reply_at),
                    reason=ReplyReason.FOLLOW_UP if decision.follow_up else ReplyReason.JUDGMENT,
                    replace=False,
                )
            else:
                continue
        else:
            continue
        restored += 1
    logger.info("restored %d timers from the database", restored)
    return restored
