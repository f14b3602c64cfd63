"""The web process's object graph, built in order: each part is given the parts built before it,
and nothing reaches back to the whole (app.wiring.runtime's Runtime, made last)."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from app.assistant.suggested import SuggestedPrompts
from app.conversation.claims.ending import interrupt as interrupt_claims
from app.conversation.intake import Intake
from app.conversation.reply.on_it import OnIt
from app.conversation.timing.policy import TimerPolicy
from app.db.mcp import approvals
from app.digest import runs as digest_runs
from app.digest.timers import DigestTimers
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.jobs.runner import InlineJobs, JobRunner
from app.jobs.supervisor import WorkerJobs
from app.jobs.timers import Timers
from app.retention.erase import Eraser
from app.retention.purge import Purge, logged
from app.settings import Settings
from app.slack.web.client import SlackClient
from app.wiring.core import build_core, job_libraries_loaded
from app.wiring.owed import OwedTimers
from app.wiring.reinstall import SlackAccess
from app.wiring.runtime import Runtime
from app.wiring.tasks import Background

logger = logging.getLogger(__name__)


def build_runtime(
    settings: Settings,
    engine: AsyncEngine,
    *,
    slack: SlackClient | None = None,
    timers: TimerBackend | None = None,
) -> Runtime:
    """Everything wired together; `slack` and `timers` may be replaced (the offline replay
    passes a local Slack stand-in and timers that compress time). Here, and only here, it is
    decided which engine keeps the timers (JOB_BACKEND) and where jobs run: in the job worker
    process (JOB_WORKER=process) or inline."""
    in_worker = settings.JOB_WORKER == "process"
    core = build_core(settings, engine, runs_jobs=not in_worker, slack=slack)
    if timers is None:
        timers = build_timers(settings, engine)
    tasks = Background()
    jobs: JobRunner
    worker: WorkerJobs | None = None
    if in_worker:
        jobs = worker = WorkerJobs(settings, core.identity)
        # Until the worker is up with its libraries loaded, this process puts the sign up.
        on_it = OnIt(slack=core.slack, engine=engine, recorder=core.recorder)
    else:
        assert core.services is not None
        jobs = InlineJobs(core.services.handlers(), ready=job_libraries_loaded)
        on_it = core.services.on_it
    approval_timers = None
    if settings.mcp_servers:
        from app.conversation.approval.timers import ApprovalTimers

        approval_timers = ApprovalTimers(engine=engine, timers=timers, run=jobs.approval)
    timer_policy = TimerPolicy(
        timers=timers,
        judge=jobs.judgment,
        reply=on_it.around(jobs.reply, elsewhere=lambda: jobs.shows_on_it),
        after_reply=approval_timers.after_reply if approval_timers is not None else None,
        min_wait=settings.MIN_WAIT_SECONDS,
        jitter_ratio=settings.JITTER_RATIO,
        follow_up_wait=settings.FOLLOW_UP_WAIT_SECONDS,
        pace_floor=settings.PACE_MIN_WAIT_SECONDS,
    )
    digests = DigestTimers(engine=engine, timers=timers, run=jobs.digest)
    owed = OwedTimers(
        settings=settings,
        engine=engine,
        sessions=core.sessions,
        timers=timers,
        timer_policy=timer_policy,
        digests=digests,
        approval_timers=approval_timers,
    )
    if worker is not None:
        # The worker runs the timers' jobs, so what it restores after a restart is built after it.
        worker.on_restart = owed.restore
    access = SlackAccess(
        engine=engine,
        slack=core.slack,
        identity=core.identity,
        directory=core.directory,
        tasks=tasks,
        restore_timers=owed.restore,
    )
    core.identity.on_authorized = access.works_again
    eraser = Eraser(
        engine=engine, recorder=core.recorder, timers=timers, on_workspace_gone=access.stop
    )
    purge = Purge(
        engine=engine,
        recorder=core.recorder,
        eraser=eraser,
        keep_seconds=settings.retention_seconds,
    )
    prompts = SuggestedPrompts(slack=core.slack, engine=engine)
    intake = Intake(
        identity=core.identity,
        recorder=core.recorder,
        directory=core.directory,
        timer_policy=timer_policy,
        participation=core.participation,
        auto_reply_channels=settings.AUTO_REPLY_CHANNELS,
        on_erasure=lambda: tasks.spawn(logged(eraser.run, what="erasing"), "erase"),
        on_assistant_opened=lambda opened: tasks.spawn(prompts.offer(opened), "prompts"),
        on_refused=access.resume,
    )
    return Runtime(
        **vars(core),
        timers=timers,
        jobs=jobs,
        on_it=on_it,
        timer_policy=timer_policy,
        digests=digests,
        owed=owed,
        slack_access=access,
        intake=intake,
        eraser=eraser,
        purge=purge,
        tasks=tasks,
        approval_timers=approval_timers,
    )


def build_timers(settings: Settings, engine: AsyncEngine) -> TimerBackend:
    if settings.JOB_BACKEND != "procrastinate":
        return Timers()
    from app.jobs.database_timers import DatabaseTimers  # Procrastinate loads only when used

    async def hand_back(kind: JobKind, details: dict[str, Any]) -> None:
        """A reply or digest whose instance died mid-way: its claim is owed again, for the
        retry. An approved call it was making: cut short, never made again."""
        if kind is JobKind.REPLY:
            await interrupt_claims(
                engine, channel=details["channel"], thread_ts=details["thread_ts"]
            )
        elif kind is JobKind.DIGEST:
            await digest_runs.interrupt(engine, channel=details["channel"])
        elif kind is JobKind.APPROVAL and await approvals.cut_short(
            engine, int(details["approval_id"])
        ):
            logger.warning("approval %s: its call was cut short", details["approval_id"])

    return DatabaseTimers(
        settings.DATABASE_URL, stalled_seconds=settings.JOB_STALLED_SECONDS, on_stalled=hand_back
    )
