"""One event's values never fail the other events of its group commit
(app.recording.isolation), and a 500 means only that the database itself failed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from sqlalchemy import text

from app.domain import Route, RouteKind
from app.recording.deliveries import APPLIED, REJECTED, NewMessage
from app.slack.events import IncomingMessage
from tests.conftest import StartTomo, Tomo, next_ts


def envelope(tomo: Tomo, event_id: str, **fields: Any) -> dict[str, Any]:
    """An event_callback carrying a channel message (api.slack.com/events/message), ids
    replaced."""
    ts = next_ts()
    event = {"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": ts}
    event |= {"event_ts": ts, "channel_type": "channel", **fields}
    return {
        "type": "event_callback",
        "team_id": "T0001",
        "api_app_id": "A1",
        "event_id": event_id,
        "event_time": 1,
        "event": event,
        "authorizations": [{"team_id": "T0001", "user_id": tomo.slack.bot_user_id, "is_bot": True}],
    }


async def test_a_text_the_database_refuses_is_cleaned_and_fails_no_other_event(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture
) -> None:
    async with start_tomo() as tomo:
        caplog.set_level(logging.INFO)
        payloads = [envelope(tomo, f"EvGood{i:02d}", text=f"good {i}") for i in range(30)]
        # A lone surrogate (no UTF-8 encoder takes it) and a NUL (PostgreSQL refuses it in
        # text), among 30 good events sent at the same time so they share a commit.
        payloads.insert(10, envelope(tomo, "EvSurrogate", text="half a pair \ud83d here"))
        payloads.insert(20, envelope(tomo, "EvNul", text="nul\x00byte"))
        answers = await asyncio.gather(*(tomo.send(p) for p in payloads))
        rows = await tomo.rows("SELECT ts, text FROM message")
        seen = await tomo.rows("SELECT count(*) AS n FROM seen_event")
        again = await tomo.send(payloads[10])  # Slack's retry of it: a duplicate now
        stored_after = await tomo.rows("SELECT count(*) AS n FROM message")
    assert [a.status_code for a in answers] == [200] * 32
    texts = {r["ts"]: r["text"] for r in rows}
    assert len(texts) == 32 and seen[0]["n"] == 32
    assert texts[payloads[10]["event"]["ts"]] == "half a pair \ufffd here"
    assert texts[payloads[20]["event"]["ts"]] in ("nul\x00byte", "nulbyte")  # SQLite keeps it
    assert again.status_code == 200 and stored_after[0]["n"] == 32
    together = [r for r in caplog.records if "writing them one by one" in r.getMessage()]
    assert together, "the refused values never shared a commit with others"
    assert "recorded with NULs or surrogates replaced" in caplog.text


def message(ts: str, text_: str = "hello", *, channel: str = "C1") -> NewMessage:
    """A person's message at the top level, routed to a judgment."""
    incoming = IncomingMessage(
        channel=channel,
        ts=ts,
        team_id="T0001",
        thread_ts="",
        user_id="U1",
        bot_id=None,
        text=text_,
        subtype=None,
        channel_type="channel",
    )
    return NewMessage(incoming, Route(RouteKind.JUDGMENT, ""))


async def test_a_delivery_that_cannot_be_stored_even_cleaned_is_rejected_alone(
    start_tomo: StartTomo,
) -> None:
    # Without the channel's pace, which the outcome of a lively channel's message carries.
    async with start_tomo(PACE_WINDOW_SECONDS=0) as tomo:
        recorder = tomo.runtime.recorder
        good = [message(next_ts()) for _ in range(8)]
        # Past the parsing guards (built here directly): a ts that is no number at all.
        bad = message("abc")
        changes = [*good[:4], bad, *good[4:]]
        outcomes = await asyncio.gather(
            *(recorder.record(event_id=f"Ev{i}", change=c) for i, c in enumerate(changes))
        )
        rows = await tomo.rows("SELECT ts FROM message")
        seen = await tomo.rows("SELECT event_id FROM seen_event")
    assert outcomes == [APPLIED] * 4 + [REJECTED] + [APPLIED] * 4
    assert sorted(r["ts"] for r in rows) == sorted(m.message.ts for m in good)
    assert "Ev4" not in {r["event_id"] for r in seen}


async def test_when_the_database_fails_every_event_gets_500_and_none_is_rejected(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture
) -> None:
    async with start_tomo() as tomo:
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(text("DROP TABLE message"))
        answers = await asyncio.gather(*(tomo.send(envelope(tomo, f"EvDown{i}")) for i in range(5)))
        seen = await tomo.rows("SELECT count(*) AS n FROM seen_event")
    assert [a.status_code for a in answers] == [500] * 5
    assert all(a.json() == {"error": "could not record the event"} for a in answers)
    assert seen[0]["n"] == 0
    assert "rejected" not in caplog.text


async def test_a_batch_that_succeeds_is_written_once(start_tomo: StartTomo) -> None:
    """The common path stays one transaction: no event is written twice to check it."""
    async with start_tomo(PACE_WINDOW_SECONDS=0) as tomo:  # outcomes without a pace
        recorder = tomo.runtime.recorder
        writes = 0
        original = recorder.write

        async def counting(work: Any) -> Any:
            nonlocal writes
            writes += 1
            return await original(work)

        recorder.write = counting  # type: ignore[method-assign]
        changes = [message(next_ts()) for _ in range(20)]
        outcomes = await asyncio.gather(
            *(recorder.record(event_id=f"EvOk{i}", change=c) for i, c in enumerate(changes))
        )
    assert outcomes == [APPLIED] * 20
    assert writes == 1
