"""Property: whatever signed body arrives at POST /slack/interactions (any payload shape, any
size up to the limit, not even a form), it never answers 5xx, and every well-formed feedback
click among them is stored as the last one its person gave that message.

One tomo under uvicorn on 127.0.0.1 serves every example (tests/routes/test_events_property.py's
`served`), with the real database (SQLite or PostgreSQL). TOMO_PROPERTY_EXAMPLES examples
(default 150 here), each a few bodies.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.interactions import feedback_payload, form, signed
from tests.routes.test_events_property import ANY, DEEP, TEXT, TRICKY, served

EXAMPLES = int(os.environ.get("TOMO_PROPERTY_EXAMPLES", "150"))
_serial = itertools.count(1)
PAYLOAD_KEYS = ["type", "user", "container", "channel", "message", "actions", "team", "token"]
ACTION_KEYS = ["type", "action_id", "block_id", "value", "action_ts"]
CLICKED, CHANGED = "1700000000", "1700000001"


@dataclass
class Body:
    raw: bytes
    click: tuple[str, str, str, str] | None  # (channel, reply_ts, user, value) when well-formed


@st.composite
def bodies(draw: st.DrawFn) -> Body:
    n = next(_serial)
    shape = draw(st.sampled_from(["click", "payload", "action", "form", "raw"]))
    # A few messages, clicked again and again; a changed body (which may still be a click)
    # names messages of its own, so what it stores never mixes with the clicks' expectations.
    second = CLICKED if shape == "click" else CHANGED
    reply_ts = f"{second}.{n % 7:06d}"
    user = draw(st.sampled_from(["U1", "U2", "U3"]))
    value = draw(st.sampled_from(["positive", "negative"]))
    payload: dict[str, Any] = feedback_payload(
        channel="C1", message_ts=reply_ts, value=value, user=user, block_id=f"tomo_feedback:{n}"
    )
    values = ANY | DEEP | st.sampled_from(TRICKY)
    if shape == "click":
        return Body(form(payload), ("C1", reply_ts, user, value))
    if shape == "payload":
        for key in draw(st.lists(st.sampled_from(PAYLOAD_KEYS), min_size=1, max_size=3)):
            payload[key] = draw(values)
        return Body(form(payload), None)
    if shape == "action":
        action = payload["actions"][0]
        for key in draw(st.lists(st.sampled_from(ACTION_KEYS), min_size=1, max_size=3)):
            action[key] = draw(values)
        return Body(form(payload), None)
    if shape == "form":  # the payload field missing, doubled, or not JSON
        field = draw(st.sampled_from(["payload", "payload", "other"]))
        value_text = draw(TEXT | st.just(json.dumps(payload)[:-1]) | st.just("[" * 2000))
        extra = draw(st.sampled_from(["", "&payload=%7B%7D", "&a=b"]))
        quoted = quote(value_text, errors="surrogatepass")  # a lone surrogate: not UTF-8
        return Body(f"{field}={quoted}{extra}".encode(), None)
    return Body(draw(st.binary(max_size=300) | st.just(b"payload=" + b"%5B" * 60_000)), None)


def _stored(database_url: str) -> dict[tuple[str, str, str], str]:
    url = database_url.replace("postgres://", "postgresql://", 1)
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                text(
                    "SELECT channel, reply_ts, user_id, value FROM feedback WHERE reply_ts LIKE :p"
                ),
                {"p": CLICKED + ".%"},
            )
            return {(r[0], r[1], r[2]): r[3] for r in rows}
    finally:
        engine.dispose()


def test_no_interaction_gets_a_5xx_and_every_click_is_stored(
    slack: FakeSlack, model: FakeModel, database_url: str
) -> None:
    expected: dict[tuple[str, str, str], str] = {}
    sent = 0
    with (
        served(slack, model, database_url) as url,
        httpx.Client(base_url=url, timeout=WAIT_SECONDS) as client,
    ):

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(batch=st.lists(bodies(), min_size=1, max_size=4))
        def deliver(batch: list[Body]) -> None:
            nonlocal sent
            for body in batch:  # in order: a person's later click replaces the earlier
                response = client.post(
                    "/slack/interactions", content=body.raw, headers=signed(body.raw)
                )
                assert response.status_code < 500, body.raw[:300]
                if body.click is not None:
                    assert response.status_code == 200 and response.content == b""
                    channel, reply_ts, user, value = body.click
                    expected[(channel, reply_ts, user)] = value
                sent += 1

        deliver()
        health = client.get("/healthz")
    assert health.status_code == 200, health.text
    assert sent >= EXAMPLES and expected
    assert _stored(database_url) == expected
