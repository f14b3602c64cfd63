"""What the replay prints, and the timers that compress time and report what they do.

`ReplayTimers` is the real `Timers` (APScheduler) with every wait divided by the speed; each
timer set, reset or cancelled is written to the timeline, and each job that runs is observed:
what it logged and posted is kept for the timeline to tell why it did what it did.
"""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TextIO

from app.db.models import Judgment
from app.jobs.kinds import JobKind
from app.jobs.timers import Timers


def pad(text: str, width: int) -> str:
    """`text` padded to `width` columns, wide (CJK) characters counting two."""
    columns = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(0, width - columns)


def clock(seconds: float) -> str:
    """`M:SS`, or `H:MM:SS` from an hour on."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def one_line(text: str) -> str:
    return " ⏎ ".join(part for part in text.splitlines() if part.strip()) or text


def describe(decision: Judgment) -> str:
    """A decision as the timeline tells it; a follow-up's says so (its delay is ignored)."""
    confidence = f"confidence {decision.confidence:.2f}" if decision.confidence is not None else ""
    what = "follow-up judgment" if decision.follow_up else "judgment"
    if not decision.valid:
        return f"{what}: invalid answer, stays silent: {decision.reason}"
    if decision.should_respond:
        delay = "" if decision.follow_up else f", delay {clock(decision.delay_seconds or 0)}"
        return f"{what}: respond ({confidence}{delay}): {decision.reason}"
    return f"{what}: stay silent ({confidence}): {decision.reason}"


def why(job: JobRun) -> str:
    for _level, note in job.notes:
        for prefix in ("judgment skipped: ", "reply skipped: ", "no reply: "):
            if note.startswith(prefix):
                return note[len(prefix) :]
    return job.notes[-1][1] if job.notes else "no reason logged"


class Timeline:
    """Entries printed as they happen, at conversation time: real time times the speed, but
    for the time tomo's judgments and replies run, which takes none of it (on a busy machine a
    judgment's second is minutes of the conversation at x200: counted, it would let the next
    message overtake the reply that judgment schedules)."""

    def __init__(self, *, out: TextIO, speed: float) -> None:
        self._out = out
        self.speed = speed
        self._started = time.monotonic()
        self._paused_at: float | None = None
        self.entries: list[tuple[float, str, str]] = []

    def start(self) -> None:
        self._started = time.monotonic()

    def now(self) -> float:
        at = self._paused_at if self._paused_at is not None else time.monotonic()
        return (at - self._started) * self.speed

    def pause(self) -> None:
        """Stop the clock (a job runs)."""
        if self._paused_at is None:
            self._paused_at = time.monotonic()

    def resume(self) -> None:
        """Go on from where the clock stopped."""
        if self._paused_at is not None:
            self._started += time.monotonic() - self._paused_at
            self._paused_at = None

    def add(self, where: str, what: str) -> None:
        at = self.now()
        self.entries.append((at, where, what))
        self.print(f"{'+' + clock(at):>8}  {pad(where, 22)} {what}")

    def print(self, line: str = "") -> None:
        self._out.write(line + "\n")
        self._out.flush()


@dataclass
class JobRun:
    kind: JobKind
    channel: str
    thread_ts: str
    latest_ts: str
    notes: list[tuple[int, str]] = field(default_factory=list)  # (level, message) logged
    posts: list[str] = field(default_factory=list)  # ts of what it posted
    later: list[tuple[str, str]] = field(default_factory=list)  # entries told after the job's


CURRENT_JOB: ContextVar[JobRun | None] = ContextVar("replay_job", default=None)


class JobNotes(logging.Handler):
    """Keeps what tomo logs while a replayed job runs (skip reasons, failures)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)

    def emit(self, record: logging.LogRecord) -> None:
        job = CURRENT_JOB.get()
        if job is not None:
            job.notes.append((record.levelno, record.getMessage()))


Where = Callable[[str, str], str]  # (channel, thread_ts) -> how the timeline names it
AfterJob = Callable[[JobRun], Awaitable[None]]


class ReplayTimers(Timers):
    def __init__(self, *, timeline: Timeline, speed: float, where: Where, after: AfterJob) -> None:
        super().__init__()
        self._timeline = timeline
        self._speed = speed
        self._where = where
        self._after = after
        self.observed_running = 0

    def handle(self, kind: JobKind, func: Callable[..., Awaitable[Any]]) -> None:
        super().handle(kind, self._observed(kind, func))

    async def set(
        self,
        kind: JobKind,
        *,
        channel: str,
        thread_ts: str,
        run_at: float,
        latest_ts: str,
        replace: bool = True,
        **kwargs: Any,
    ) -> None:
        now = time.time()
        wait = max(0.0, run_at - now)
        replaced = await self.get(kind, channel=channel, thread_ts=thread_ts) is not None
        if replaced and not replace:
            return
        why = f" ({kwargs['reason']})" if kwargs.get("reason") else ""
        when = "now" if wait < 0.5 else f"in {clock(wait)}"
        entry = (
            self._where(channel, thread_ts),
            f"timer {'reset' if replaced else 'set'}: {kind} {when}{why}",
        )
        job = CURRENT_JOB.get()
        if job is not None and job.kind == JobKind.JUDGMENT:
            job.later.append(entry)  # told after the decision that set it
        else:
            self._timeline.add(*entry)
        await super().set(
            kind,
            channel=channel,
            thread_ts=thread_ts,
            run_at=now + wait / self._speed,
            latest_ts=latest_ts,
            **kwargs,
        )

    def _remove(self, identifier: str) -> bool:
        removed = super()._remove(identifier)
        kind, _, rest = identifier.partition(":")
        if removed and kind in (JobKind.JUDGMENT, JobKind.REPLY):
            channel, _, thread_ts = rest.partition(":")
            self._timeline.add(self._where(channel, thread_ts), f"timer cancelled: {kind}")
        return removed

    def due(self) -> bool:
        """A judgment or reply runs now, or its time has come and it is about to."""
        now = time.time()
        return self.observed_running > 0 or any(
            t.kind in (JobKind.JUDGMENT, JobKind.REPLY)
            and t.run_at is not None
            and t.run_at.timestamp() <= now
            for t in self.timers()
        )

    @property
    def busy(self) -> bool:
        """A judgment or reply is waiting or running."""
        return self.observed_running > 0 or any(
            t.kind in (JobKind.JUDGMENT, JobKind.REPLY) for t in self.timers()
        )

    def _observed(
        self, kind: JobKind, func: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[None]]:
        async def run(**kwargs: Any) -> None:
            job = JobRun(kind, kwargs["channel"], kwargs["thread_ts"], kwargs.get("latest_ts", ""))
            self.observed_running += 1
            self._timeline.pause()
            token = CURRENT_JOB.set(job)
            try:
                await func(**kwargs)
            finally:
                CURRENT_JOB.reset(token)
                try:
                    await self._after(job)
                finally:
                    self.observed_running -= 1
                    if not self.observed_running:
                        self._timeline.resume()

        return run
