"""What is owed gets its timer back: at the start, after the job worker's restart, and when
Slack takes the token again after an uninstall."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.conversation.timing.policy import TimerPolicy
from app.conversation.timing.recovery import restore_timers
from app.digest import runs as digest_runs
from app.digest.timers import DigestTimers
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.settings import Settings

if TYPE_CHECKING:
    from app.conversation.approval.timers import ApprovalTimers

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class OwedTimers:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    timers: TimerBackend
    timer_policy: TimerPolicy
    digests: DigestTimers
    approval_timers: ApprovalTimers | None  # None: MCP_SERVERS is unset

    async def restore(self) -> int:
        """Every conversation still owed a judgment or a reply gets its timer back, and every
        digest schedule its timer (a digest cut short by the stop is owed again)."""
        async with self.engine.begin() as connection:
            keep = await self.timers.channels_running(JobKind.DIGEST)
            if await digest_runs.interrupt_unfinished(connection, keep=keep):
                logger.warning("a digest was cut short by the last stop")
        await self.digests.restore()
        async with self.sessions() as session:
            restored = await restore_timers(
                session,
                self.timer_policy,
                min_wait=self.settings.MIN_WAIT_SECONDS,
                follow_up_wait=self.settings.FOLLOW_UP_WAIT_SECONDS,
                max_age=self.settings.MAX_MESSAGE_AGE_SECONDS,
                replying=await self.timers.replies_running(),
            )
        if self.approval_timers is not None:
            restored += await self.approval_timers.restore()
        return restored
