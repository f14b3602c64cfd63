"""The test harness: tomo in-process over HTTP (httpx ASGI transport, its real lifespan), the real
slack-sdk client and LiteLLM talking to stand-in servers on 127.0.0.1 (tests/fakes).

The database is a fresh SQLite file per test, or, with TOMO_TEST_DATABASE_URL set (CI sets a
PostgreSQL URL), that database emptied before each test.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import hypothesis
import pytest
from sqlalchemy import create_engine, make_url, text

from app.jobs.backend import Timer
from app.jobs.timers import Timers
from app.llm.connections import close_connections
from app.main import create_app
from app.settings import Settings
from app.wiring.runtime import Runtime
from tests.environment import scrub_environment
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.fakes.response_url import FakeResponseUrl
from tests.signing import sign

scrub_environment()
# Nor the machine's speed: no per-example deadline (hypothesis's is 200 ms) and no "too slow"
# health check for any property test; a test's own @settings keeps these unless it says.
hypothesis.settings.register_profile(
    "tomo", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile("tomo")

with warnings.catch_warnings():
    # Imported once here, with its import-time warnings silenced, rather than on the app's
    # background thread where the suite's warnings-as-errors would break it.
    warnings.simplefilter("ignore")
    import app.llm

    app.llm.client._load()

SIGNING_SECRET = "test-signing-secret"
ADMIN_TOKEN = "test-admin-token"
TEST_DATABASE_URL = os.environ.get("TOMO_TEST_DATABASE_URL")
_ts_counter = itertools.count(1)


def next_ts() -> str:
    """A Slack-like ts near now, strictly increasing within the run."""
    return f"{int(time.time()) - 5}.{next(_ts_counter):06d}"


_last_ts = [0.0]


def later_ts() -> str:
    """A ts after anything tomo has posted so far (next_ts runs 5 s behind): now, strictly
    increasing within the run."""
    _last_ts[0] = max(time.time(), _last_ts[0] + 0.000001)
    return f"{_last_ts[0]:.6f}"


def purpose_of(request: dict[str, Any]) -> str:
    """Which of tomo's prompts a model request carries: judgment, memory or reply."""
    first = request["messages"][0]
    content = first.get("content") if first.get("role") == "system" else ""
    if '"should_respond"' in str(content):
        return "judgment"
    if "[memory:" in str(content):
        return "memory"
    return "reply"


def turns_of(request: dict[str, Any]) -> list[dict[str, Any]]:
    """A reply request's chat turns: between its system message and the current time, which
    comes last (app.conversation.reply.prompt.reply_messages)."""
    messages = request["messages"]
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "system"
    assert str(messages[-1]["content"]).startswith("Current time:")
    return list(messages[1:-1])


def judgment_json(should_respond: bool, *, delay: float | None = 0, reason: str = "test") -> str:
    return json.dumps(
        {
            "should_respond": should_respond,
            "reason": reason,
            "confidence": 0.9,
            "delay_seconds": delay,
        }
    )


DATABASE_FIXTURES = frozenset({"database_url", "postgres_url"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With TOMO_TEST_DATABASE_ONLY=1 (scripts/test sets it for its PostgreSQL run, beside the
    SQLite run of the whole suite), only the tests that reach a database run: one that asks
    for no database fixture runs the same whatever TOMO_TEST_DATABASE_URL says, and the
    SQLite run has run it. So does one marked `one_database`: it needs a database to run
    tomo, but what it tests is elsewhere (the job worker's supervision, /readyz, /metrics);
    what several processes do with PostgreSQL, the fleet tests try."""
    if os.environ.get("TOMO_TEST_DATABASE_ONLY") != "1":
        return
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    for item in items:
        uses = DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        (kept if uses and not item.get_closest_marker("one_database") else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def _sync(url: str) -> str:
    url = url.replace("postgres://", "postgresql://", 1)
    return url.replace("postgresql://", "postgresql+psycopg://", 1)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str | None]:
    """A database of this test session's own on the TOMO_TEST_DATABASE_URL server, so runs in
    parallel (several developers, CI) never empty each other's tables."""
    if not TEST_DATABASE_URL:
        yield None
        return
    server = make_url(_sync(TEST_DATABASE_URL))
    name = f"tomo_test_{os.getpid()}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield (
            server.set(database=name)
            .render_as_string(hide_password=False)
            .replace("postgresql+psycopg://", "postgresql://", 1)
        )
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _empty_postgres(url: str) -> str:
    engine = create_engine(_sync(url), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    return url


@pytest.fixture(scope="session")
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture(scope="session")
def fake_response_url() -> Iterator[FakeResponseUrl]:
    with FakeResponseUrl() as fake:
        yield fake


@pytest.fixture
async def litellm_closed() -> AsyncIterator[None]:
    """For a test that calls LiteLLM outside a life of tomo (whose stop does this): LiteLLM's
    HTTP clients closed while the test's event loop still runs. Left open, they stay in
    LiteLLM's cache for minutes, and their sockets to the stand-ins reach the garbage
    collector in some later test, as a ResourceWarning there (app.llm.connections)."""
    yield
    await close_connections()


@pytest.fixture
def hooks(fake_response_url: FakeResponseUrl) -> FakeResponseUrl:
    """Slack's response_url hooks for slash commands (what tomo says after an answer)."""
    fake_response_url.reset()
    return fake_response_url


@pytest.fixture
def slack(fake_slack: FakeSlack) -> FakeSlack:
    fake_slack.reset()
    fake_slack.add_channel("C1", "general")
    fake_slack.add_channel("C2", "random")
    fake_slack.add_user("U1", name="alice", display_name="Alice")
    fake_slack.add_user("U2", name="bob", display_name="Bob")
    return fake_slack


@pytest.fixture
def model(fake_model: FakeModel) -> FakeModel:
    fake_model.reset()
    return fake_model


@pytest.fixture
def database_url(tmp_path: Path, postgres_url: str | None) -> str:
    if postgres_url:
        return _empty_postgres(postgres_url)
    return f"sqlite:///{tmp_path / 'tomo.db'}"


class Tomo:
    """A running tomo and the means to talk to it like Slack does."""

    def __init__(self, client: httpx.AsyncClient, runtime: Runtime, slack: FakeSlack) -> None:
        self.client = client
        self.runtime = runtime
        self.slack = slack

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    async def post_raw(self, body: bytes, headers: dict[str, str]) -> httpx.Response:
        return await self.client.post("/slack/events", content=body, headers=headers)

    async def send(
        self, payload: dict[str, Any], *, retry: int | None = None, timestamp: int | None = None
    ) -> httpx.Response:
        body = json.dumps(payload).encode()
        headers = sign(body, secret=SIGNING_SECRET, timestamp=timestamp)
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        return await self.post_raw(body, headers)

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry: int | None = None,
        event_time: int | None = None,
    ) -> httpx.Response:
        envelope = {
            "token": "legacy",
            "team_id": "T0001",
            "api_app_id": "A1",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_ts_counter):08d}",
            "event_time": event_time or int(time.time()),
            "event": event,
            # Whom Slack delivered the event for: the app's bot user, as a bot token installs it.
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": "T0001",
                    "user_id": self.slack.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }
        return await self.send(envelope, retry=retry)

    async def message(
        self,
        text: str,
        *,
        channel: str = "C1",
        user: str | None = "U1",
        thread_ts: str | None = None,
        channel_type: str = "channel",
        kind: str = "message",
        ts: str | None = None,
        event_id: str | None = None,
        event_time: int | None = None,
        **extra: Any,
    ) -> str:
        """Deliver a user's message like Slack; returns its ts (asserts a 200)."""
        ts = ts or next_ts()
        event: dict[str, Any] = {
            "type": kind,
            "channel": channel,
            "text": text,
            "ts": ts,
            "event_ts": ts,
            "channel_type": channel_type,
            **extra,
        }
        if user is not None:
            event["user"] = user
        if thread_ts:
            event["thread_ts"] = thread_ts
        response = await self.event(event, event_id=event_id, event_time=event_time)
        assert response.status_code == 200, response.text
        return ts

    @property
    def memory_timers(self) -> Timers:
        """The in-memory timers (the default backend), for tests that reach into them."""
        assert isinstance(self.runtime.timers, Timers)
        return self.runtime.timers

    @contextlib.asynccontextmanager
    async def timers_held(self) -> AsyncIterator[None]:
        """No timer runs inside the block, however long its deliveries take on a busy machine;
        those due meanwhile run as it ends, late (a late timer still runs). For messages that
        must reach tomo within one quiet wait, as a thread reply that moves its parent's
        conversation into the thread: a short MIN_WAIT_SECONDS alone assumes they come faster
        than it."""
        scheduler = self.memory_timers.scheduler
        scheduler.pause()
        try:
            yield
        finally:
            scheduler.resume()

    async def timers(self, *kinds: str) -> list[Timer]:
        """The pending timers (of these kinds), soonest first."""
        return [t for t in await self.runtime.timers.list() if not kinds or t.kind in kinds]

    async def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        async with self.runtime.engine.connect() as connection:
            result = await connection.execute(text(sql), params)
            return [dict(row._mapping) for row in result]


async def wait_for(
    predicate: Callable[[], Awaitable[object] | object],
    *,
    timeout: float = WAIT_SECONDS,
    what: str = "it",
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        outcome = predicate()
        if isinstance(outcome, Awaitable):
            outcome = await outcome
        if outcome:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


def tomo_settings(
    slack: FakeSlack, model: FakeModel, database_url: str, **overrides: Any
) -> Settings:
    """Settings pointing tomo at the stand-ins, with short waits; `overrides` win."""
    values: dict[str, Any] = {
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_BOT_TOKEN": "xoxb-test-token",
        "SLACK_API_URL": slack.url,
        "DATABASE_URL": database_url,
        "ADMIN_TOKEN": ADMIN_TOKEN,
        "LLM_MODEL": "openai/test-model",
        "LLM_API_BASE": model.api_base,
        "LLM_API_KEY": "sk-test",
        "LLM_MAX_RETRIES": 0,
        # Generous: a first LiteLLM call on a busy machine is slow; the tests of a model that
        # answers too late set a short one of their own.
        "LLM_TIMEOUT_SECONDS": 30,
        "MIN_WAIT_SECONDS": 0.3,
        "JITTER_RATIO": 0,
        "MAX_REPLY_DELAY_SECONDS": 5,
        "MEMORY_UPDATE_INTERVAL_SECONDS": 3600,
        "LOG_LEVEL": "DEBUG",
        # Jobs on the test's own event loop, where a test can reach into them; the worker
        # process (the default) has tests of its own in tests/jobs/test_worker.py.
        "JOB_WORKER": "inline",
        # Replies posted whole, as most tests expect; tests/conversation/reply/test_streaming.py
        # streams them.
        "STREAM_REPLIES": "false",
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


StartTomo = Callable[..., contextlib.AbstractAsyncContextManager[Tomo]]


@pytest.fixture
def start_tomo(slack: FakeSlack, model: FakeModel, database_url: str) -> StartTomo:
    """`async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:` runs one life of the app."""

    def settings(**overrides: Any) -> Settings:
        return tomo_settings(slack, model, database_url, **overrides)

    @contextlib.asynccontextmanager
    async def run(*, wait_identity: bool = True, **overrides: Any) -> AsyncIterator[Tomo]:
        app = create_app(settings(**overrides))
        async with app.router.lifespan_context(app):
            runtime: Runtime = app.state.runtime
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://tomo") as client:
                if wait_identity:
                    # Start-up's background work: auth.test, then the channel directory; and
                    # the start-up purge (app.retention.purge), whose writes go through the
                    # recorder a test may be counting.
                    start_up = [
                        t for t in runtime.background if t.get_name() in ("identity", "purge")
                    ]
                    await asyncio.wait_for(runtime.identity.known.wait(), WAIT_SECONDS)
                    if start_up:
                        await asyncio.wait(start_up, timeout=WAIT_SECONDS)
                yield Tomo(client, runtime, slack)

    return run
