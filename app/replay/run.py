"""One replay: the conversation goes, as signed Slack events, through tomo's own ingress,
routing, timers, judgment and reply code, against a temporary SQLite database and a local
Slack stand-in, with time compressed; the timeline is printed as it happens."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import httpx
from pydantic import SecretStr
from sqlalchemy import func
from sqlmodel import col, select

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.db.models import Judgment, LLMCall, Reply
from app.jobs.kinds import JobKind
from app.llm import litellm_module
from app.main import create_app
from app.replay.cast import Cast, signed
from app.replay.conversation import ReplayLine
from app.replay.offline import OfflineAnswers
from app.replay.slack import TEAM_ID, ReplaySlack
from app.replay.timeline import (
    CURRENT_JOB,
    JobRun,
    ReplayTimers,
    Timeline,
    clock,
    describe,
    one_line,
    why,
)
from app.settings import Settings
from app.wiring.build import build_runtime
from app.wiring.runtime import Runtime

SETTLE_SECONDS = 0.1  # real time with nothing waiting before the replay counts as finished


@dataclass(frozen=True)
class Summary:
    messages: int
    judgments: int
    responded: int
    replies: int
    llm_calls: int
    tokens: int
    cost_usd: float | None
    finished: bool  # False when pending timers were given up on


class Replay:
    def __init__(self, lines: list[ReplayLine], *, settings: Settings, speed: float, out: TextIO):
        self.lines = lines
        self.speed = speed
        self.cast = Cast(lines, settings.PERSONA_NAME)
        self.persona = settings.PERSONA_NAME
        self.timeline = Timeline(out=out, speed=speed)
        self.labels: dict[str, str] = {}  # ts -> how the timeline names its thread
        self.ids: dict[str, str] = {}  # a line's `id` -> its ts
        self.slack = ReplaySlack(
            channels=self.cast.channels,
            people=self.cast.people,
            persona_name=settings.PERSONA_NAME,
            on_post=self._posted,
        )
        self.timers = ReplayTimers(
            timeline=self.timeline, speed=speed, where=self.where, after=self._after_job
        )
        self._settings = settings
        self._last_judgment = 0
        self.runtime: Runtime | None = None

    def where(self, channel: str, thread_ts: str) -> str:
        name, kind = self.cast.channels.get(channel, (channel, "channel"))
        place = f"DM {name}" if kind == "im" else f"#{name}"
        return f"{place} > {self.labels.get(thread_ts, thread_ts)}" if thread_ts else place

    def _posted(self, channel: str, thread_ts: str, ts: str, text: str) -> None:
        job = CURRENT_JOB.get()
        if job is not None:
            job.posts.append(ts)
        self.labels.setdefault(ts, f"{self.persona} +{clock(self.timeline.now())}")
        self.timeline.add(self.where(channel, thread_ts), f"{self.persona}: {one_line(text)}")

    async def _after_job(self, job: JobRun) -> None:
        where = self.where(job.channel, job.thread_ts)
        for level, note in job.notes:
            if level >= logging.WARNING:
                self.timeline.add(where, f"warning: {note}")
        if job.kind == JobKind.JUDGMENT:
            assert self.runtime is not None
            async with self.runtime.sessions() as session:
                found = await session.exec(
                    select(Judgment)
                    .where(col(Judgment.id) > self._last_judgment)
                    .order_by(col(Judgment.id))
                )
                decisions = found.all()
            for decision in decisions:
                self._last_judgment = max(self._last_judgment, decision.id or 0)
                self.timeline.add(
                    self.where(decision.channel, decision.thread_ts), describe(decision)
                )
            if not decisions:
                self.timeline.add(where, f"judgment skipped: {why(job)}")
        elif not job.posts:
            self.timeline.add(where, f"reply: nothing posted ({why(job)})")
        for entry in job.later:
            self.timeline.add(*entry)

    async def run(self, *, offline: bool, timeout: float) -> Summary:
        with tempfile.TemporaryDirectory(prefix="tomo-replay-") as folder:
            settings = self._settings.model_copy(
                update={
                    "SLACK_SIGNING_SECRET": SecretStr(secrets.token_hex(16)),
                    "SLACK_BOT_TOKEN": SecretStr("xoxb-replay-offline"),
                    "SLACK_API_URL": "http://127.0.0.1:9/api/",  # never used: no web client
                    "DATABASE_URL": f"sqlite:///{Path(folder) / 'replay.db'}",
                    "ADMIN_TOKEN": None,
                    # The replay watches every job run, on its own event loop.
                    "JOB_WORKER": "inline",
                    # Replies posted whole: the replay shows each as one message.
                    "STREAM_REPLIES": "false",
                    # Wall-clock limits in conversation time, like the timers.
                    "AUTONOMOUS_COOLDOWN_SECONDS": (
                        self._settings.AUTONOMOUS_COOLDOWN_SECONDS / self.speed
                    ),
                }
            )
            engine = create_engine(settings.DATABASE_URL)
            try:
                await upgrade_to_head(engine)
                self.runtime = build_runtime(settings, engine, slack=self.slack, timers=self.timers)
                if offline:
                    self.runtime.llm.mock_response = OfflineAnswers(self.slack.text_of)
                return await self._play(self.runtime, settings, timeout)
            finally:
                self.timers.shutdown()
                if self.runtime is not None:
                    await self.runtime.close()  # the engine with it
                else:
                    await engine.dispose()

    async def _play(self, runtime: Runtime, settings: Settings, timeout: float) -> Summary:
        # LiteLLM's first call loads more of it; done now, it does not stall the timeline.
        litellm = await litellm_module()
        await litellm.acompletion(
            model=settings.LLM_MODEL, messages=[{"role": "user", "content": "-"}], mock_response="-"
        )
        runtime.recorder.start()
        await self.timers.start()
        await runtime.identity.learn(self.slack)
        await runtime.directory.sync_channels()
        app = create_app(settings)  # its routes only: the lifespan is this replay's own
        app.state.runtime = runtime
        secret = settings.SLACK_SIGNING_SECRET.get_secret_value()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            self.timeline.start()
            for number, line in enumerate(self.lines, start=1):
                await _sleep_until(self.timeline, line.at)
                await self._caught_up(timeout)
                body = self._event(line, number)
                response = await client.post(
                    "/slack/events", content=body, headers=signed(body, secret)
                )
                response.raise_for_status()
        finished = await self._settle(timeout)
        return await self._summary(runtime, finished)

    def _event(self, line: ReplayLine, number: int) -> bytes:
        channel = self.cast.channel_ids[line.channel]
        ts = self.slack.next_ts()
        thread_ts = self.ids[line.thread] if line.thread else None
        if line.id:
            self.ids[line.id] = ts
        self.labels[ts] = line.id or f"+{clock(self.timeline.now())}"
        raw = {
            "type": "message",
            "channel": channel,
            "user": self.cast.user_ids[line.user],
            "text": self.cast.slack_text(line.text),
            "ts": ts,
            "event_ts": ts,
            "channel_type": line.channel_type,
            **({"thread_ts": thread_ts} if thread_ts else {}),
        }
        self.slack.add_message(channel, raw)
        self.timeline.add(
            self.where(channel, thread_ts or ""), f"{line.user}: {one_line(line.text)}"
        )
        envelope = {
            "type": "event_callback",
            "team_id": TEAM_ID,
            "event_id": f"EvReplay{number:05d}",
            "event": raw,
        }
        return json.dumps(envelope).encode()

    async def _caught_up(self, timeout: float) -> None:
        """Before the next message: what tomo was due to do by now is done (a judgment or
        reply whose time has come runs to its end). At a compressed time, a busy machine's
        seconds are minutes of the conversation: without this, a reply due before a message
        could come after it, and the conversation would read differently."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.timers.due() or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.01)

    async def _settle(self, timeout: float) -> bool:
        """Wait until no judgment or reply is waiting or running; False when `timeout` (real
        seconds) ran out first."""
        deadline = time.monotonic() + timeout
        quiet_since: float | None = None
        while True:
            now = time.monotonic()
            if self.timers.busy:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= SETTLE_SECONDS:
                return True
            if now > deadline:
                waiting = [t.id for t in self.timers.timers() if t.kind in ("judgment", "reply")]
                self.timeline.add("", f"gave up waiting after {timeout:g} s: {waiting}")
                return False
            await asyncio.sleep(0.02)

    async def _summary(self, runtime: Runtime, finished: bool) -> Summary:
        async with runtime.sessions() as session:
            judgments = (await session.exec(select(Judgment))).all()
            replies = (
                await session.exec(select(func.count()).where(col(Reply.status) == "posted"))
            ).one()
            calls, tokens, cost = (
                await session.exec(
                    select(
                        func.count(col(LLMCall.id)),
                        func.sum(
                            func.coalesce(col(LLMCall.prompt_tokens), 0)
                            + func.coalesce(col(LLMCall.completion_tokens), 0)
                        ),
                        func.sum(col(LLMCall.cost_usd)),
                    )
                )
            ).one()
        return Summary(
            messages=len(self.lines),
            judgments=len(judgments),
            responded=sum(1 for j in judgments if j.should_respond),
            replies=int(replies),
            llm_calls=int(calls or 0),
            tokens=int(tokens or 0),
            cost_usd=float(cost) if cost is not None else None,
            finished=finished,
        )


async def _sleep_until(timeline: Timeline, at: float) -> None:
    """Sleep until conversation time `at` (the clock stops while a job runs)."""
    while True:
        wait = (at - timeline.now()) / timeline.speed
        if wait <= 0:
            return
        await asyncio.sleep(min(wait, 0.05))
