"""On it (docs/how-tomo-works.md#reply): for a mention or DM, the person sees within a second that
tomo is working, until the reply is posted or fails.

The sign is Slack's thread status ("tomo is thinking…" under the thread the reply goes to:
assistant.threads.setStatus, which takes the `chat:write` scope and works in channel threads
since March 2026), else an :eyes: reaction on the person's message (`reactions:write`): for a
direct message answered outside a thread, or where Slack refuses the status. Neither stops the
reply when Slack refuses it.

It is set as soon as the reply timer fires (right after the acknowledgement, never on its
path): by the job worker once it is up with its libraries loaded, which writes the reply there
anyway, and by the web process before that (a worker still importing LiteLLM after a start
does not delay it). The reply waits a moment for the sign to be up, so the sign comes first.
Each sign is written to the database while it is up; one left by a stopped process is cleared
at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import OnIt as OnItRow
from app.domain import ReplyReason
from app.recording.recorder import Recorder
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

JobFunc = Callable[..., Awaitable[Any]]


class SignKind(StrEnum):
    """How the sign shows (stored in the `on_it` table while it is up)."""

    STATUS = "status"  # the thread's status
    REACTION = "reaction"  # an :eyes: reaction on the person's message


STATUS_TEXT = "is thinking…"  # Slack shows it after the app's name
REACTION_NAME = "eyes"
# How long a reply waits for its sign before it starts anyway (the sign still follows).
HEAD_START_SECONDS = 0.3
CLEAR_PAUSES = (0.0, 1.0, 3.0)
# Refusals about one message or thread, not about whether the app may set a status at all.
_NOT_HERE = frozenset(
    {"channel_not_found", "thread_not_found", "invalid_thread_ts", "message_not_found"}
)


@dataclass(frozen=True)
class Sign:
    channel: str
    ts: str  # the person's message
    thread_ts: str  # the thread the reply goes to ("" for a DM answered outside a thread)
    kind: SignKind | None  # None when Slack refused both

    @property
    def key(self) -> tuple[str, str]:
        return self.channel, self.ts


class OnIt:
    def __init__(self, *, slack: SlackClient, engine: AsyncEngine, recorder: Recorder) -> None:
        self._slack = slack
        self._engine = engine
        self._recorder = recorder
        self._status_refused: set[str] = set()  # reasons (mention, dm) Slack refused it for
        self._working: Counter[tuple[str, str]] = Counter()  # jobs per message
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}
        self._waiting: Counter[tuple[str, str]] = Counter()  # holding or awaiting each lock
        self._tasks: set[asyncio.Task[Any]] = set()

    def around(self, job: JobFunc, *, elsewhere: Callable[[], bool]) -> JobFunc:
        """The reply job as the process that keeps the timers runs it, with the sign up while
        it runs (for mentions and DMs). While `elsewhere()` is true (the job worker is up, its
        libraries loaded), the job is asked to put the sign up itself (`on_it=True`: its
        ReplyService does): two Slack calls a mention, a millisecond or two of CPU each, then
        cost the worker's core rather than the one that acknowledges events."""

        async def reply_with_sign(**kwargs: Any) -> Any:
            reason, ts = kwargs.get("reason"), kwargs.get("latest_ts")
            if reason is None or not ReplyReason(reason).shows_on_it or not ts:
                return await job(**kwargs)
            if elsewhere():
                return await job(**kwargs, on_it=True)
            channel, thread_ts = str(kwargs["channel"]), str(kwargs.get("thread_ts") or "")
            async with self.during(channel, thread_ts, str(ts), reason=ReplyReason(reason)):
                return await job(**kwargs)

        return reply_with_sign

    @contextlib.asynccontextmanager
    async def during(
        self, channel: str, thread_ts: str, ts: str, *, reason: ReplyReason
    ) -> AsyncIterator[None]:
        """The sign up while the block runs, for a reply whose reason shows it: the block waits
        a moment for it (HEAD_START_SECONDS) so that the sign comes first; it is cleared after
        the block, in the background."""
        if not reason.shows_on_it or not ts:
            yield
            return
        shown = asyncio.Event()
        showing = self._spawn(self.show(channel, thread_ts, ts, reason=str(reason), shown=shown))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(shown.wait(), HEAD_START_SECONDS)
        try:
            yield
        finally:
            self._spawn(self._clear_after(showing))

    async def show(
        self,
        channel: str,
        thread_ts: str,
        ts: str,
        *,
        reason: str,
        shown: asyncio.Event | None = None,
    ) -> Sign:
        """Put the sign up (and remember it); a Slack refusal is logged, never raised.
        `shown` is set once Slack has answered, before the sign is remembered."""
        async with self._only(channel, ts):
            self._working[(channel, ts)] += 1
            first = (
                SignKind.STATUS
                if thread_ts and reason not in self._status_refused
                else SignKind.REACTION
            )
            remembered = self._spawn(self._remember(Sign(channel, ts, thread_ts, first)))
            started = time.monotonic()
            kind = await self._set(channel, thread_ts, ts, reason=reason, first=first)
            logger.info("on it: %s in %.0f ms", kind or "nothing shown", _ms_since(started))
            if shown is not None:
                shown.set()
            await asyncio.gather(remembered, return_exceptions=True)
            return Sign(channel, ts, thread_ts, kind)

    async def clear(self, sign: Sign) -> None:
        async with self._only(*sign.key):
            self._working[sign.key] -= 1
            if self._working[sign.key] > 0:
                return  # another job is still working on this message
            del self._working[sign.key]
            await self._take_down(sign)

    async def clear_leftovers(self) -> int:
        """At start-up: clear the signs a stopped process left up (unless a reply restored
        since has put one up again)."""
        async with self._engine.connect() as connection:
            rows = (await connection.execute(select(OnItRow))).all()
        cleared = 0
        for row in rows:
            async with self._only(row.channel, row.ts):
                if self._working[(row.channel, row.ts)]:
                    continue
                # Whichever kind it was (a fallback may have followed): clear both.
                for kind in tuple(SignKind) if row.thread_ts else (SignKind.REACTION,):
                    await self._take_down(Sign(row.channel, row.ts, row.thread_ts, kind))
                cleared += 1
        if cleared:
            logger.info("cleared %d 'on it' sign(s) left by the last stop", cleared)
        return cleared

    async def close(self, *, timeout: float = 3.0) -> None:
        """Let the signs being cleared finish (briefly), then stop."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- Slack ----------------------------------------------------------------------------

    async def _set(
        self, channel: str, thread_ts: str, ts: str, *, reason: str, first: SignKind
    ) -> SignKind | None:
        if first is SignKind.STATUS:
            try:
                await self._slack.set_thread_status(
                    channel=channel, thread_ts=thread_ts, status=STATUS_TEXT
                )
                return SignKind.STATUS
            except SlackError as error:
                definite = not (error.uncertain or error.rate_limited)
                if definite and error.error not in _NOT_HERE:
                    self._status_refused.add(reason)
                logger.warning("thread status refused (%s); reacting instead", error)
        try:
            await self._slack.add_reaction(channel=channel, ts=ts, name=REACTION_NAME)
            return SignKind.REACTION
        except SlackError as error:
            logger.warning("could not show that tomo is on it: %s", error)
            return None

    async def _take_down(self, sign: Sign) -> None:
        """Clear the sign in Slack (a few tries), then forget it; a sign that could not be
        cleared stays remembered for the next start."""
        for pause in CLEAR_PAUSES:
            await asyncio.sleep(pause)
            try:
                if sign.kind is SignKind.STATUS:
                    await self._slack.set_thread_status(
                        channel=sign.channel, thread_ts=sign.thread_ts, status=""
                    )
                elif sign.kind is SignKind.REACTION:
                    await self._slack.remove_reaction(
                        channel=sign.channel, ts=sign.ts, name=REACTION_NAME
                    )
            except SlackError as error:
                logger.warning("could not clear the 'on it' sign: %s", error)
                continue
            await self._forget(sign)
            return

    async def _clear_after(self, showing: asyncio.Task[Sign]) -> None:
        await asyncio.wait([showing])
        if not showing.cancelled() and showing.exception() is None:
            await self.clear(showing.result())

    # -- the database ---------------------------------------------------------------------

    async def _remember(self, sign: Sign) -> None:
        row: dict[str, Any] = {"channel": sign.channel, "ts": sign.ts}
        row |= {"thread_ts": sign.thread_ts, "kind": sign.kind, "set_at": time.time()}
        statement = upsert(self._engine.dialect.name, OnItRow).values(row)
        statement = statement.on_conflict_do_update(
            index_elements=["channel", "ts"], set_={"kind": sign.kind, "set_at": row["set_at"]}
        )

        def store(connection: Connection) -> None:
            connection.execute(statement)

        await self._recorder.write(store)

    async def _forget(self, sign: Sign) -> None:
        def remove(connection: Connection) -> None:
            connection.execute(
                delete(OnItRow).where(
                    col(OnItRow.channel) == sign.channel, col(OnItRow.ts) == sign.ts
                )
            )

        await self._recorder.write(remove)

    # -- bookkeeping ----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _only(self, channel: str, ts: str) -> AsyncIterator[None]:
        """One change at a time to a message's sign."""
        key = (channel, ts)
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._waiting[key] += 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key]
                self._locks.pop(key, None)
            if not self._working[key]:
                self._working.pop(key, None)

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("'on it' failed", exc_info=task.exception())


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000
