"""Jobs running at once never exhaust the database connections: a job lets go of its connection
while it waits for Slack (the names of people a prompt would show unnamed), so the lookups'
own writes, and the other jobs, always find one (docs/how-tomo-works.md#reply)."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import TEST_DATABASE_URL, StartTomo, wait_for
from tests.conversation.reply.test_reply import answer_by_purpose
from tests.fakes import FakeModel, FakeSlack

CONNECTIONS = 10  # the web process's pool on PostgreSQL (app.db.engine.create_engine)


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="the connection pool is PostgreSQL's")
async def test_more_replies_at_once_than_connections_are_all_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    count = CONNECTIONS + 4
    for n in range(count):
        slack.add_channel(f"C{100 + n}", f"room-{n}")
        slack.add_user(f"U{100 + n}", name=f"person{n}", display_name=f"Person {n}")
    slack.delay("users.info", 1.0)  # each reply waits for its author's name
    answer_by_purpose(model, reply="hello!")
    async with start_tomo() as tomo:
        await asyncio.gather(
            *(
                tomo.message("<@UBOT> are you there?", channel=f"C{100 + n}", user=f"U{100 + n}")
                for n in range(count)
            )
        )
        await slack.wait_for_posts(count)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM person WHERE id = 'U100'"), what="names stored"
        )
    assert sorted(p["channel"] for p in slack.posts()) == sorted(
        f"C{100 + n}" for n in range(count)
    )
