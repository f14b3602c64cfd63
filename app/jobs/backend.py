"""The one interface to the timers, whichever engine keeps them (JOB_BACKEND).

- `apscheduler` (app.jobs.timers): APScheduler 3 in this process's memory; one instance.
- `procrastinate` (app.jobs.database_timers): Procrastinate jobs in the PostgreSQL database;
  any number of instances share them.

The conversation code (app.conversation.timing.policy, recovery), /tomo status, /admin and
/healthz use only what is here and never ask which engine runs. A conversation's timers are
named by app.jobs.kinds.job_id: at most one pending judgment and one pending reply each.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from app.jobs.kinds import JobKind

# What a job of one kind runs, called with its details; through the job worker's socket it
# returns what JSON can carry.
Handler = Callable[..., Awaitable[Any]]
BackendName = Literal["apscheduler", "procrastinate"]


@dataclass(frozen=True)
class Timer:
    """A pending job: a conversation's judgment or reply, or a periodic job (no channel)."""

    id: str
    kind: JobKind
    channel: str | None
    thread_ts: str | None
    run_at: datetime | None
    seconds_left: float | None
    latest_ts: str | None  # the message that set it
    reason: str | None = None  # why a reply is owed (app.domain.ReplyReason)


def soonest_first(timers: list[Timer]) -> list[Timer]:
    return sorted(timers, key=lambda t: t.run_at.timestamp() if t.run_at else float("inf"))


def newer(ts: object, than: str) -> bool:
    """Whether Slack timestamp `ts` is later than `than`: a timer set by a newer message is
    never replaced by an older one's (deliveries can come late, or to another instance)."""
    try:
        return float(str(ts)) > float(than)
    except ValueError:
        return False


class TimerBackend(Protocol):
    name: BackendName

    def handle(self, kind: JobKind, func: Handler) -> None:
        """What a conversation's job of this kind runs, called with the timer's details
        (channel, thread_ts, latest_ts and what `set` was given). Registered before start."""
        ...

    def every(self, kind: JobKind, *, seconds: float, func: Callable[[], Awaitable[Any]]) -> None:
        """A periodic job: once per interval (for the whole fleet). Registered before start."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None:
        """Start no new job, let running ones finish for a while, then let go of them."""
        ...

    @property
    def running(self) -> bool: ...

    async def set(
        self,
        kind: JobKind,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        replace: bool = True,
        **details: Any,
    ) -> None:
        """The conversation's job of this kind at `run_at` (epoch s), replacing a pending one
        unless that one was set by a newer message; with replace=False a pending or running
        one is kept (what recovery sets)."""
        ...

    async def cancel(self, kind: JobKind, *, channel: str, thread_ts: str) -> bool: ...

    async def get(self, kind: JobKind, *, channel: str, thread_ts: str) -> Timer | None: ...

    async def pending(self, channel: str, thread_ts: str) -> bool:
        """Whether the conversation has a judgment or a reply waiting."""
        ...

    async def remove(self, identifier: str) -> bool:
        """Cancel a judgment or reply by id; False when there is none, or it is periodic."""
        ...

    def is_periodic(self, identifier: str) -> bool: ...

    async def list(self) -> builtins.list[Timer]:
        """Every pending job, soonest first."""
        ...

    async def count(self, kind: JobKind) -> int: ...

    async def replies_running(self) -> builtins.set[tuple[str, str]]:
        """The conversations (channel, thread_ts) whose reply job runs now, anywhere: their
        claims are not left over from a stop."""
        ...

    async def channels_running(self, kind: JobKind) -> builtins.set[str]:
        """The channels whose job of this kind runs now, on another instance: their claims
        are not left over from a stop (none with one instance, asked at its start)."""
        ...
