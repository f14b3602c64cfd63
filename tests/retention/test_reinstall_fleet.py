"""A reinstall on several instances (docs/data-and-privacy.md#installing-it-again): real `uvicorn`
processes with JOB_BACKEND=procrastinate on one PostgreSQL database. The uninstall reaches one
instance, the first message after the reinstall another: the mark lifted in the database, the
message is stored; its reply, refused by Slack meanwhile, stays owed and is posted once after
the restart with the new token, as is a mention sent right after it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from sqlalchemy import text

from app.db.engine import create_engine
from tests.conftest import TEST_DATABASE_URL, next_ts, wait_for
from tests.fakes import FakeSlack
from tests.processes import Server, server

__all__ = ["server"]  # the fixture

pytestmark = pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")

FLEET = {"JOB_BACKEND": "procrastinate", "JOB_WORKER": "inline", "MIN_WAIT_SECONDS": "0.5"}


async def query(database_url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            return [tuple(row) for row in (await connection.execute(text(sql))).all()]
    finally:
        await engine.dispose()


async def test_a_reinstall_on_a_fleet_loses_nothing(
    server: Callable[..., Server], database_url: str, slack: FakeSlack
) -> None:
    a, b = server(**FLEET), server(**FLEET)
    await a.start(timeout=40)
    await b.start(timeout=40)
    uninstalled = int(time.time()) - 60

    async def erased() -> bool:
        rows = await query(database_url, "SELECT done_at FROM erasure WHERE scope = 'team'")
        return bool(rows) and all(done is not None for (done,) in rows)

    await a.message("", kind="app_uninstalled", event_time=uninstalled)
    await wait_for(erased, timeout=30, what="the erasure")
    slack.refuse_token()  # the old token stays revoked until the restart
    # In Slack too: a reply refused for its token is looked up before it is posted again.
    between = next_ts()
    slack.add_message("C2", ts=between, text="<@UBOT> are you back?", user="U1")
    await b.message(
        "<@UBOT> are you back?",
        channel="C2",
        kind="app_mention",
        event_time=uninstalled + 30,
        ts=between,
    )
    stored = await query(database_url, "SELECT ts FROM message")
    marks = await query(database_url, "SELECT * FROM erasure")
    assert stored == [(between,)] and marks == []
    assert await a.stop() and await b.stop()

    slack.refuse_token(None)  # restarted with the new token
    a2, b2 = server(**FLEET), server(**FLEET)
    await a2.start(timeout=40)
    first = await a2.message("<@UBOT> hello?", channel="C1", kind="app_mention")
    await b2.start(timeout=40)
    posts = await slack.wait_for_posts(2, timeout=60)
    await wait_for(lambda: _quiet(a2), timeout=30, what="no job left")
    assert sorted((p["channel"], p.get("thread_ts")) for p in slack.posts()) == [
        ("C1", first),
        ("C2", between),
    ]
    assert len(posts) == 2


async def _quiet(instance: Server) -> bool:
    return [j for j in await instance.jobs() if j["kind"] in ("judgment", "reply")] == []
