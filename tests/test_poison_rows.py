"""Nothing stored can stop start-up, a channel or the admin page: message rows whose ts is no
plausible Slack timestamp (stored before ingress refused them) are skipped and logged by
recovery, the context builder, memory and the admin pages."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from sqlalchemy import insert

from app.db.models import Judgment, Message
from tests.conftest import ADMIN_TOKEN, StartTomo, Tomo, judgment_json, next_ts, wait_for
from tests.conversation.reply.test_reply import answer_by_purpose
from tests.fakes import FakeModel

POISON = {
    "inf": "inf",
    "1e300": "1e300",
    "32 digits": "1" * 32,
    "far future": "9999999999.000100",
    "-1e300": "-1e300",
}
BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def row(ts: str, **fields: Any) -> dict[str, Any]:
    """A message row as the recorder stored it before ts was checked: created_at = float(ts)."""
    values = {
        "channel": "C1",
        "ts": ts,
        "team_id": "T0001",
        "thread_ts": "",
        "conversation_ts": "",
        "route": "judgment",
        "user_id": "U1",
        "bot_id": None,
        "text": f"poison {ts[:20]}",
        "subtype": None,
        "channel_type": "channel",
        "created_at": float(ts),
        "edited_at": None,
        "deleted": False,
    }
    return values | fields


async def plant(tomo: Tomo, bad: str) -> None:
    """The poison in every place it can sit: a channel's top level (judged, and not), a
    thread's parent and its reply, a mention that started its own thread, and the time of a
    judgment."""
    earlier = next_ts()
    rows = [
        row(earlier, text="a good question from before"),
        row(bad),
        row(bad, channel="C3"),  # a conversation whose newest message it is, never judged
        row(bad, channel="C2", route="reply", conversation_ts=bad, text="<@UBOT> poison"),
        row(next_ts(), channel="C2", thread_ts=bad, conversation_ts=bad, text="reply to it"),
    ]
    async with tomo.runtime.engine.begin() as connection:
        await connection.execute(insert(Message), rows)
        await connection.execute(
            insert(Judgment),
            [{"channel": "C1", "thread_ts": "", "latest_ts": bad, "decided_at": float(bad)}],
        )


@pytest.mark.parametrize("bad", POISON.values(), ids=POISON.keys())
async def test_a_poison_row_is_skipped_and_logged_and_the_service_works_on(
    start_tomo: StartTomo, model: FakeModel, caplog: pytest.LogCaptureFixture, bad: str
) -> None:
    answer_by_purpose(model, judgment=judgment_json(False), reply="here I am")
    async with start_tomo() as tomo:
        await plant(tomo, bad)
    caplog.clear()
    # The restart over it; with no retention, since its purge would delete the rows dated
    # long ago (-1e300) before anything could skip them.
    async with start_tomo(MIN_WAIT_SECONDS=0.1, MESSAGE_RETENTION_DAYS=0) as tomo:
        caplog.set_level(logging.INFO)
        health = await tomo.client.get("/healthz")
        page = await tomo.client.get("/admin", auth=("admin", ADMIN_TOKEN))
        overview = await tomo.client.get("/admin/overview", headers=BEARER)

        # The channel is not silenced: a new question is judged, a mention answered.
        question = await tomo.message("anyone around?")
        await wait_for(
            lambda: tomo.rows(
                "SELECT 1 FROM judgment WHERE channel = 'C1' AND latest_ts = :ts", ts=question
            ),
            what="the judgment of the new question",
        )
        await tomo.message("<@UBOT> hello?", channel="C2")
        await tomo.slack.wait_for_posts(1)

        memory = await tomo.runtime.memory.run()
        memories = await tomo.rows("SELECT scope_id, source_ts FROM memory WHERE scope = 'channel'")
    assert health.status_code == 200 and health.json()["status"] in ("ok", "degraded")
    assert page.status_code == 200
    assert overview.status_code == 200
    assert [p["text"] for p in tomo.slack.posted] == ["here I am"]
    assert memory is not None
    # The memory's newest source is a real message, not the poison.
    assert {m["source_ts"] for m in memories if m["scope_id"] == "C1"} == {question}
    skipped = [r for r in caplog.records if "skipped" in r.getMessage() and bad in r.getMessage()]
    assert skipped, caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
