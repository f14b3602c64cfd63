"""A recorded human message becomes timers (docs/how-tomo-works.md#routing): a reply now, or a
judgment later."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from app.conversation.timing.pace import paced_wait
from app.db.models import Judgment
from app.domain import ReplyReason, Route, RouteKind
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.slack.events import IncomingMessage

logger = logging.getLogger(__name__)

JobFunc = Callable[..., Awaitable[Any]]
JudgeFunc = Callable[..., Awaitable[Judgment | None]]
AfterReply = Callable[..., Awaitable[None]]  # called with channel=, thread_ts=


class TimerPolicy:
    def __init__(
        self,
        *,
        timers: TimerBackend,
        judge: JudgeFunc,
        reply: JobFunc,
        min_wait: float,
        jitter_ratio: float,
        follow_up_wait: float,
        pace_floor: float = 0.0,
        after_reply: AfterReply | None = None,
    ) -> None:
        """`pace_floor`: PACE_MIN_WAIT_SECONDS, the shortest quiet wait of a lively channel
        (app.conversation.timing.pace). `after_reply`: what follows each reply job here (the
        timers of the approvals its conversation asked for, app.conversation.approval.timers)."""
        self._timers = timers
        self._judge = judge
        self._reply = reply
        self._after_reply = after_reply
        self._min_wait = min_wait
        self._jitter_ratio = jitter_ratio
        self._follow_up_wait = follow_up_wait
        self._pace_floor = pace_floor
        timers.handle(JobKind.JUDGMENT, self.judge)
        timers.handle(JobKind.REPLY, self.reply)

    async def on_new_message(self, message: IncomingMessage, route: Route) -> None:
        """Set the timers a newly recorded message calls for. This is the ack path: with the
        default backend no I/O happens here; with Procrastinate, its database writes."""
        if route.kind is RouteKind.RECORD:
            return
        channel, conversation = message.channel, route.conversation_ts
        if message.thread_ts or route.kind is RouteKind.REPLY:
            await self._leave_top_level(message)
        if route.kind is RouteKind.REPLY:
            await self._timers.cancel(JobKind.JUDGMENT, channel=channel, thread_ts=conversation)
            await self.schedule_reply(
                channel=channel,
                thread_ts=conversation,
                run_at=time.time(),
                latest_ts=message.ts,
                reason=route.reason or ReplyReason.MENTION,
            )
            return
        await self._timers.cancel(JobKind.REPLY, channel=channel, thread_ts=conversation)
        follow_up = route.kind is RouteKind.FOLLOW_UP
        if follow_up:  # a conversation tomo takes part in: judged a few seconds after the last
            wait = self._follow_up_wait
        else:  # shorter in a lively channel (route.pace)
            wait = paced_wait(
                min_wait=self._min_wait,
                floor=self._pace_floor,
                pace=route.pace,
                jitter_ratio=self._jitter_ratio,
            )
        await self.schedule_judgment(
            channel=channel,
            thread_ts=conversation,
            run_at=time.time() + wait,
            latest_ts=message.ts,
            follow_up=follow_up,
        )

    async def _leave_top_level(self, message: IncomingMessage) -> None:
        """A reply under the newest top-level message (or a top-level mention, which starts its
        own thread) means the channel's top level has nothing left to judge or answer."""
        anchor = message.thread_ts or message.ts
        for kind in (JobKind.JUDGMENT, JobKind.REPLY):
            timer = await self._timers.get(kind, channel=message.channel, thread_ts="")
            if timer is None:
                continue
            if not message.thread_ts or timer.latest_ts == anchor:
                await self._timers.cancel(kind, channel=message.channel, thread_ts="")

    async def judge(self, **job: Any) -> Judgment | None:
        """The judgment job: the decision (made wherever jobs run), then its reply timer."""
        decision = await self._judge(**job)
        await self.after_judgment(decision)
        return decision

    async def reply(self, **job: Any) -> Any:
        """The reply job (made wherever jobs run), then what follows it here."""
        try:
            return await self._reply(**job)
        finally:
            if self._after_reply is not None:
                await self._after_reply(channel=job["channel"], thread_ts=job["thread_ts"])

    async def after_judgment(self, decision: Judgment | None) -> None:
        """A decision to speak becomes a reply timer, unless the conversation moved on; a
        follow-up's answers the person (reason follow_up)."""
        if decision is None or not decision.should_respond or decision.reply_at is None:
            return
        channel, thread_ts = decision.channel, decision.thread_ts
        if await self._timers.pending(channel, thread_ts):
            # A mention's reply, or a newer message's judgment, has taken over.
            logger.info("the conversation moved on meanwhile; not scheduling a reply")
            return
        await self.schedule_reply(
            channel=channel,
            thread_ts=thread_ts,
            run_at=decision.reply_at,
            latest_ts=decision.latest_ts,
            reason=ReplyReason.FOLLOW_UP if decision.follow_up else ReplyReason.JUDGMENT,
        )

    async def schedule_judgment(
        self,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        follow_up: bool = False,
        replace: bool = True,
    ) -> None:
        """A follow-up's judgment is the same timer, its reason `follow_up` (shown by /admin
        and /tomo status, and given to the judgment)."""
        details = {"reason": str(ReplyReason.FOLLOW_UP)} if follow_up else {}
        await self._timers.set(
            JobKind.JUDGMENT,
            channel=channel,
            thread_ts=thread_ts,
            run_at=run_at,
            latest_ts=latest_ts,
            replace=replace,
            **details,
        )
        logger.debug(
            "judgment %s:%s at %.1f%s", channel, thread_ts, run_at, " (follow-up)" * follow_up
        )

    async def schedule_reply(
        self,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        reason: ReplyReason,
        replace: bool = True,
    ) -> None:
        await self._timers.set(
            JobKind.REPLY,
            channel=channel,
            thread_ts=thread_ts,
            run_at=run_at,
            latest_ts=latest_ts,
            replace=replace,
            reason=str(reason),  # a job's details are JSON with Procrastinate
        )
        logger.debug("reply %s:%s at %.1f (%s)", channel, thread_ts, run_at, reason)
