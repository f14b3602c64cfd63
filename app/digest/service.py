"""A channel's digest, written and posted (docs/how-tomo-works.md#digests): the job that runs
where jobs run (the job worker, or inline), for the schedule's due time or for `/tomo digest
now` (the last 24 hours).

It claims the digest (app.digest.runs) so it is posted once; reads the period's messages from
what tomo stored of that channel (app.digest.messages); with none, posts nothing and asks the
model nothing; else has the model write it (app.digest.writer), turns its citations into links
(app.digest.links), stores the text, posts it (app.digest.posting), and, in the transaction
that ends the claim, moves the schedule on to its next due time.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.context.instructions import read_instructions
from app.db import erasure
from app.db.models import Channel, DigestSchedule
from app.digest import runs
from app.digest.links import linked
from app.digest.messages import period_messages
from app.digest.posting import post_digest
from app.digest.runs import DONE, Held, Run, RunStatus
from app.digest.schedule import DAY_SECONDS, Cadence
from app.digest.schedules import advance, note_until, read_schedule
from app.digest.writer import DigestWriter
from app.llm import LLMError
from app.observability.logs import log_context
from app.slack.identity import Identity
from app.slack.mrkdwn import format_reply
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

EARLY_SECONDS = 1.0  # a timer that fires this much before its due time still counts


class DigestService:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        slack: SlackClient,
        identity: Identity,
        writer: DigestWriter,
        zone: ZoneInfo,
        keep_seconds: float | None,
    ) -> None:
        self._engine = engine
        self._slack = slack
        self._identity = identity
        self._writer = writer
        self._zone = zone
        self._keep = keep_seconds

    async def run(self, *, channel: str, now: bool = False, **_: Any) -> dict[str, Any]:
        """The channel's digest now due (or, with `now`, of the last 24 hours): what became of
        it (`outcome`: posted, empty, failed, held, early, none, retry) and the schedule's
        next due time. Errors are logged; a stop (cancellation) leaves the claim owed."""
        await self._identity.known.wait()
        with log_context(job_id=f"digest:{channel}"):
            try:
                return await self._run(channel, now=now)
            except Exception:
                logger.exception("digest failed")
                return {"outcome": "retry"}

    async def _run(self, channel: str, *, now: bool) -> dict[str, Any]:
        moment = time.time()
        async with self._engine.connect() as connection:
            if await erasure.workspace_gone(connection):
                return {"outcome": "none"}
            schedule = await read_schedule(connection, channel)
        if now:
            due, since, until = moment, moment - DAY_SECONDS, moment
        elif schedule is None:
            return {"outcome": "none"}
        elif schedule.next_due_at > moment + EARLY_SECONDS:
            return {"outcome": "early", "next_due_at": schedule.next_due_at}
        else:
            due = until = schedule.next_due_at
            since = max(schedule.last_until or 0.0, due - Cadence(schedule.cadence).window)
        taken = await runs.claim(
            self._engine, channel=channel, due_at=due, since=since, until=until
        )
        if isinstance(taken, Held):
            following = None
            if taken.status in DONE and schedule is not None and not now:
                following = await self._settle_schedule(schedule, due_at=due)
            logger.info("digest due %.0f is %s elsewhere", due, taken.status.value)
            return {"outcome": "held", "status": taken.status.value, "next_due_at": following}
        logger.info(
            "digest due %.0f claimed%s: %s to %s",
            due,
            " (taken over)" if taken.taken_over else "",
            f"{since:.0f}",
            f"{until:.0f}",
        )
        async with runs.held(self._engine, taken):
            return await self._digest(taken, scheduled=not now)

    async def _digest(self, run: Run, *, scheduled: bool) -> dict[str, Any]:
        chunks, counted, links = run.chunks, None, (0, 0)
        if chunks is None:
            async with self._engine.connect() as connection:
                period = await period_messages(
                    connection,
                    channel=run.channel,
                    since=run.since,
                    until=run.until,
                    me=self._identity.me(),
                    workspace_url=self._identity.url,
                    kept_since=time.time() - self._keep if self._keep else None,
                )
                instructions = await read_instructions(connection, run.channel)
                name = await connection.scalar(
                    select(col(Channel.name)).where(col(Channel.id) == run.channel)
                )
            counted = len(period.messages)
            if not period.messages:
                return await self._end(run, RunStatus.EMPTY, scheduled=scheduled, messages=0)
            try:
                written = await self._writer.write(
                    period,
                    channel_name=name or run.channel,
                    instructions=instructions.text if instructions else None,
                    since=run.since,
                    until=run.until,
                )
            except LLMError as error:
                return await self._end(run, RunStatus.FAILED, scheduled=scheduled, error=str(error))
            body, kept, dropped = linked(written.body, period.links)
            links = (kept, dropped)
            chunks = format_reply(body)
            chunks[0] = f"{written.title}\n\n{chunks[0]}"
            await runs.store_chunks(self._engine, run, chunks, messages=counted)
        try:
            stamps = await post_digest(self._slack, run, chunks)
        except SlackError as error:
            if error.uncertain:
                raise  # owed: looked up in Slack before anything is posted again
            return await self._end(run, RunStatus.FAILED, scheduled=scheduled, error=str(error))
        logger.info(
            "digest posted in %d message(s): %s messages, %d links (%d numbers dropped)",
            len(stamps),
            counted if counted is not None else "stored",
            *links,
        )
        return await self._end(run, RunStatus.POSTED, scheduled=scheduled, posted_ts=stamps[0])

    async def _end(
        self,
        run: Run,
        status: RunStatus,
        *,
        scheduled: bool,
        posted_ts: str | None = None,
        error: str | None = None,
        messages: int | None = None,
    ) -> dict[str, Any]:
        """The claim ended, and in the same transaction the schedule moved on (a digest that
        failed leaves where the next one starts as it was); old claims expire."""
        following = None
        covered = status is not RunStatus.FAILED
        async with self._engine.begin() as connection:
            await runs.finish(
                connection, run, status=status, posted_ts=posted_ts, error=error, messages=messages
            )
            if scheduled:
                following = await advance(
                    connection,
                    channel=run.channel,
                    due_at=run.due_at,
                    zone=self._zone,
                    until=run.until if covered else None,
                )
            elif covered:
                await note_until(connection, channel=run.channel, until=run.until)
            if self._keep:
                await runs.expire(connection, before=time.time() - self._keep)
        if status is not RunStatus.POSTED:
            logger.info("digest %s%s", status.value, f": {error}" if error else "")
        return {"outcome": status.value, "next_due_at": following}

    async def _settle_schedule(self, schedule: DigestSchedule, *, due_at: float) -> float | None:
        """A digest done already (its run ended before the schedule could move: another
        version's, a crash between): the schedule moves on."""
        async with self._engine.begin() as connection:
            return await advance(
                connection, channel=schedule.channel, due_at=due_at, zone=self._zone, until=None
            )
