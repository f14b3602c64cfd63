"""The web process's long-lived parts: everything every process holds (app.wiring.core), plus the
timers, where their jobs run, the "on it" sign, the timer policy and the intake of events.
Built by app.wiring.build; started and stopped by app.wiring.lifespan."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.conversation.intake import Intake
from app.conversation.reply.on_it import OnIt
from app.conversation.timing.policy import TimerPolicy
from app.digest.timers import DigestTimers
from app.jobs.backend import TimerBackend
from app.jobs.runner import JobRunner
from app.jobs.supervisor import WorkerJobs
from app.llm.model_keys import CHECKING, check_model_key
from app.retention.erase import Eraser
from app.retention.purge import Purge
from app.wiring.core import Core
from app.wiring.owed import OwedTimers
from app.wiring.reinstall import SlackAccess
from app.wiring.tasks import Background

if TYPE_CHECKING:  # the job services are built only where jobs run (app.wiring.core)
    from collections.abc import Coroutine

    from app.context.builder import ContextBuilder
    from app.conversation.approval.timers import ApprovalTimers
    from app.conversation.judgment.service import JudgmentService
    from app.conversation.reply.service import ReplyService
    from app.llm import LLM
    from app.memory.refresh import MemoryService
    from app.wiring.job_services import JobServices


@dataclass
class Runtime(Core):
    timers: TimerBackend = field(kw_only=True)
    jobs: JobRunner = field(kw_only=True)
    on_it: OnIt = field(kw_only=True)  # the sign this process puts up around a reply job
    timer_policy: TimerPolicy = field(kw_only=True)
    digests: DigestTimers = field(kw_only=True)
    owed: OwedTimers = field(kw_only=True)
    slack_access: SlackAccess = field(kw_only=True)  # at start-up and after a reinstall
    intake: Intake = field(kw_only=True)
    eraser: Eraser = field(kw_only=True)
    purge: Purge = field(kw_only=True)
    tasks: Background = field(kw_only=True)
    # Inline: the model key check's outcome (app.llm.model_keys), None until LiteLLM is loaded.
    model_key: str | None = field(default=None, kw_only=True)
    # Where this instance's processes count (app.observability.metrics); None: METRICS_TOKEN is
    # unset.
    metrics_directory: Path | None = field(default=None, kw_only=True)
    # The timers of calls waiting for approval; None: MCP_SERVERS is unset.
    approval_timers: ApprovalTimers | None = field(default=None, kw_only=True)

    @property
    def worker(self) -> WorkerJobs | None:
        """The job worker process's supervisor; None when jobs run inline."""
        return self.jobs if isinstance(self.jobs, WorkerJobs) else None

    @property
    def inline(self) -> JobServices:
        """The job services, when jobs run in this process (JOB_WORKER=inline)."""
        if self.services is None:
            raise RuntimeError("jobs run in the job worker process, not here")
        return self.services

    @property
    def llm(self) -> LLM:
        return self.inline.llm

    @property
    def builder(self) -> ContextBuilder:
        return self.inline.builder

    @property
    def judgment(self) -> JudgmentService:
        return self.inline.judgment

    @property
    def reply(self) -> ReplyService:
        return self.inline.reply

    @property
    def memory(self) -> MemoryService:
        return self.inline.memory

    @property
    def background(self) -> set[asyncio.Task[None]]:
        return self.tasks.running

    async def restore_timers(self) -> int:
        """Every conversation still owed a judgment or a reply gets its timer back, and every
        digest schedule its timer (app.wiring.owed)."""
        return await self.owed.restore()

    @property
    def model_key_state(self) -> str:
        """`ok`, `checking` while LiteLLM loads, or why the models cannot be asked (no key):
        where jobs run, the job worker or this process, checked it."""
        known = self.worker.model_key if self.worker is not None else self.model_key
        return known or CHECKING

    async def check_model_key(self) -> None:
        self.model_key = await check_model_key(self.settings)

    def spawn(self, coroutine: Coroutine[Any, Any, None], name: str) -> None:
        self.tasks.spawn(coroutine, name)
