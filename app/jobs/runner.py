"""Where jobs run, behind one interface: in the job worker process (app.jobs.supervisor's
WorkerJobs, JOB_WORKER=process) or on the web process's own event loop (InlineJobs,
JOB_WORKER=inline). The timers, the /tomo command and the periodic memory job call a runner
and never ask which it is; app.wiring.build chooses it, once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from app.db.models import Judgment
from app.jobs.backend import Handler
from app.jobs.kinds import JobKind


class JobRunner(Protocol):
    async def judgment(self, **job: Any) -> Judgment | None: ...

    async def reply(self, **job: Any) -> list[str]: ...

    async def memory(self, **job: Any) -> None: ...

    async def approval(self, **job: Any) -> float | None:
        """A call waiting for approval moved on (app.conversation.approval.job): when to
        look again, or None."""

    async def digest(self, **job: Any) -> dict[str, Any] | None:
        """A channel's digest (app.digest.service): what became of it; None when it was lost
        with the job worker."""
        ...

    @property
    def shows_on_it(self) -> bool:
        """Whether a reply job now puts its "on it" sign up itself (asked with on_it=True),
        rather than the web process around it."""
        ...

    @property
    def waiting_for(self) -> str | None:
        """What a job started now would wait for first (a worker starting, an import), or
        None: it runs at once. GET /readyz says 503 with it."""
        ...


class InlineJobs:
    """Jobs run here, by the services' handlers (app.wiring.job_services). `ready` says whether
    this process has imported what a job calls (LiteLLM, slack-sdk): the wiring knows."""

    def __init__(self, handlers: Mapping[JobKind, Handler], *, ready: Callable[[], bool]) -> None:
        self._handlers = handlers
        self._ready = ready

    async def judgment(self, **job: Any) -> Judgment | None:
        decision: Judgment | None = await self._handlers[JobKind.JUDGMENT](**job)
        return decision

    async def reply(self, **job: Any) -> list[str]:
        return list(await self._handlers[JobKind.REPLY](**job))

    async def memory(self, **job: Any) -> None:
        await self._handlers[JobKind.MEMORY](**job)

    async def approval(self, **job: Any) -> float | None:
        again = await self._handlers[JobKind.APPROVAL](**job)
        return float(again) if again is not None else None

    async def digest(self, **job: Any) -> dict[str, Any] | None:
        outcome: dict[str, Any] | None = await self._handlers[JobKind.DIGEST](**job)
        return outcome

    @property
    def shows_on_it(self) -> bool:
        return False  # the web process is where the reply runs: its sign goes around it

    @property
    def waiting_for(self) -> str | None:
        if self._ready():
            return None
        return "LiteLLM and slack-sdk are still being imported"
