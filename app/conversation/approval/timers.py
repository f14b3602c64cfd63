"""The timers of calls waiting for approval (docs/tools.md#approvals), kept by the process that
owns the timers (the web process; with Procrastinate, the fleet's database).

Each conversation has at most one call waiting, so its timer is `approval:{channel}:{thread_ts}`
like a reply's, run at the end of the wait, or at once when the person decides. The reply that
asked (in the job worker, which has no timers) leaves the approval in the database; once its
job is done here, its conversation's approvals get their timers. At start-up every approval not
yet done gets its timer back (`restore`); a call whose process died while making it (the
instance restarted, or its job taken for dead by the fleet: app.wiring.build's `hand_back`) is
marked cut short, never made again. The job itself runs where jobs run (JobRunner) and says
when to look again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.mcp import approvals
from app.db.mcp.approvals import State
from app.db.models.mcp import McpApproval
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind

logger = logging.getLogger(__name__)

RunApproval = Callable[..., Awaitable[float | None]]


class ApprovalTimers:
    def __init__(self, *, engine: AsyncEngine, timers: TimerBackend, run: RunApproval) -> None:
        self._engine = engine
        self._timers = timers
        self._run = run
        timers.handle(JobKind.APPROVAL, self.fire)

    async def fire(self, *, channel: str, thread_ts: str, approval_id: int, **_: Any) -> None:
        """The timer: the job runs where jobs run; its answer sets the next look."""
        again = await self._run(approval_id=approval_id)
        if again is not None:
            approval = await approvals.get(self._engine, int(approval_id))
            if approval is not None:
                await self.set(approval, run_at=again)

    async def set(self, approval: McpApproval, *, run_at: float, replace: bool = True) -> None:
        await self._timers.set(
            JobKind.APPROVAL,
            channel=approval.channel,
            thread_ts=approval.thread_ts,
            run_at=run_at,
            latest_ts=approval.card_ts or approval.trigger_ts,
            replace=replace,
            approval_id=approval.id,
        )

    async def decided(self, approval: McpApproval) -> None:
        """A person decided: the job runs now."""
        await self.set(approval, run_at=time.time())

    async def restore(self, **conversation: str) -> int:
        """Every approval not done (of one conversation: channel=, thread_ts=) gets its timer;
        one already set is kept. At start (every approval), a call being made whose job runs
        nowhere now was cut short by the stop: its process is gone."""
        waiting = await approvals.unfinished(self._engine, **conversation)
        if not conversation and any(a.state == State.CALLING for a in waiting):
            running = await self._timers.channels_running(JobKind.APPROVAL)
            for approval in waiting:
                if approval.state == State.CALLING and approval.channel not in running:
                    assert approval.id is not None
                    await self.cut_short(approval.id)
        for approval in waiting:
            await self.set(approval, run_at=_when(approval), replace=False)
        if waiting and not conversation:
            logger.info("restored %d approval timer(s)", len(waiting))
        return len(waiting)

    async def cut_short(self, approval_id: int) -> None:
        if await approvals.cut_short(self._engine, approval_id):
            logger.warning("approval %d: its call was cut short by a stop", approval_id)

    async def after_reply(self, *, channel: str, thread_ts: str) -> None:
        """After a reply job (app.conversation.timing.policy): the approvals its conversation
        asked for get their timers."""
        try:
            await self.restore(channel=channel, thread_ts=thread_ts)
        except Exception:
            logger.exception("the approvals of %s were not given timers", channel)


def _when(approval: McpApproval) -> float:
    if approval.state == State.PENDING:
        return approval.expires_at
    if approval.state == State.CALLING and approval.called_at is not None:
        return approval.called_at  # the job says how long a call still may take
    return time.time()
