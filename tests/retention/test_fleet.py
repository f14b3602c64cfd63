"""Deletions with several instances (docs/data-and-privacy.md): real `uvicorn` processes with
JOB_BACKEND=procrastinate on one PostgreSQL database. A channel deleted, or the app
uninstalled, delivered to one instance, cancels the timers any instance set, and the rows are
deleted from the shared database."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from sqlalchemy import text

from app.db.engine import create_engine
from tests.conftest import TEST_DATABASE_URL, wait_for
from tests.processes import Server, server

__all__ = ["server"]  # the fixture

pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")

FLEET = {"JOB_BACKEND": "procrastinate", "JOB_WORKER": "inline", "MIN_WAIT_SECONDS": "120"}


async def messages_in(database_url: str) -> dict[str, int]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT channel, count(*) FROM message GROUP BY channel")
            )
            return {row[0]: int(row[1]) for row in rows.all()}
    finally:
        await engine.dispose()


async def test_deletions_delivered_to_one_instance_cancel_the_fleets_timers(
    server: Callable[..., Server], database_url: str
) -> None:
    a, b = server(**FLEET), server(**FLEET)
    await a.start(timeout=40)
    await b.start(timeout=40)
    await a.message("anyone for lunch?", channel="C1")
    await b.message("the build is red", channel="C2")

    async def judgments() -> list[str]:
        return sorted(j["id"] for j in await a.jobs() if j["kind"] == "judgment")

    await wait_for(
        lambda: _equal(judgments(), ["judgment:C1:", "judgment:C2:"]), timeout=20, what="timers"
    )
    # channel_deleted for C1, delivered to b (Server.message sends any event type).
    await b.message("", kind="channel_deleted", channel="C1")
    await wait_for(lambda: _equal(judgments(), ["judgment:C2:"]), timeout=30, what="C1's timer")
    await wait_for(
        lambda: _equal(messages_in(database_url), {"C2": 1}), timeout=30, what="C1's messages"
    )
    # The app uninstalled, delivered to a: every timer of the fleet stops, every row goes.
    uninstalled = int(time.time())
    await a.message("", kind="app_uninstalled", event_time=uninstalled)
    await wait_for(lambda: _equal(judgments(), []), timeout=30, what="every timer")
    await wait_for(lambda: _equal(messages_in(database_url), {}), timeout=30, what="everything")
    # A late retry of an event from before the uninstall (a later one proves a reinstall).
    await b.message(
        "<@UBOT> still there?", channel="C2", kind="app_mention", event_time=uninstalled - 1
    )
    assert await messages_in(database_url) == {}
    assert [j for j in await b.jobs() if j["kind"] in ("judgment", "reply")] == []


async def _equal(value: object, expected: object) -> bool:
    return await value == expected  # type: ignore[misc]
