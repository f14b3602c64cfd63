"""Property: whatever signed event bodies arrive, POST /slack/events never answers 5xx, the
service stays healthy, nothing on the way in is logged as an error, and every well-formed event
among them is stored.

One tomo serves every example: uvicorn on 127.0.0.1 in a thread of its own, the database
(SQLite or PostgreSQL) and the Slack and model stand-ins real. Each example is a handful of
bodies sent at once, so well-formed and malformed events share group commits. The number of
examples is TOMO_PROPERTY_EXAMPLES (default 500: about 2,000 bodies).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, text

from app.main import create_app
from tests.conftest import SIGNING_SECRET, tomo_settings
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.signing import sign

EXAMPLES = int(os.environ.get("TOMO_PROPERTY_EXAMPLES", "500"))
VALID_CHANNELS = ("CVALID1", "CVALID2", "GVALID3")
_serial = itertools.count(1)

# Values that have broken parsers, databases and time formatting before.
TRICKY: list[Any] = [
    "inf", "-inf", "nan", "NaN", "1e300", "-1e300", "1" * 32, "abc", "", " ", "0",
    "9999999999.000100", "-1700000000.000100", "1700000000.0000001", "1_700_000_000.5",
    "\u0661\u0667\u0660\u0660\u0660\u0660\u0660\u0660\u0660\u0660.000001",
    "\x00", "nul\x00", "\ud800", "lone \udfff", "C" * 200, "x" * 5000,
    0, -1, 1.5, 1e308, 2**70, -(2**70), True, False, None, [], {}, [[[]]], {"ts": "1"},
]  # fmt: skip


def _json() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
        | st.sampled_from(TRICKY)
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=5,
    )


ANY = _json()
DEEP = st.integers(min_value=50, max_value=400).map(lambda n: json.loads("[" * n + "]" * n))
# Any text; now and then one with what databases and encoders refuse: NULs, lone surrogates.
TEXT = st.one_of(
    *[st.text(st.characters(codec=None, exclude_categories=()), max_size=40)] * 4,
    st.sampled_from(["\x00", "nul \x00 in it", "\ud83d", "half \ude00 a pair", "\udfff\x00"]),
)

# A channel message as Slack sends it (api.slack.com/events/message and its subtypes), ids
# replaced; `ts`, `channel` and the event id are set when it is sent.
WELL_FORMED = st.fixed_dictionaries(
    {"type": st.just("message"), "text": TEXT, "user": st.sampled_from(["U1", "U2", "U0G9QF9C6"])},
    optional={
        "subtype": st.sampled_from(
            ["thread_broadcast", "file_share", "me_message", "channel_join", "channel_topic"]
        ),
        "thread_ts": st.sampled_from(["1700000000.000100", "1355517523.000005"]),
        "channel_type": st.sampled_from(["channel", "group", "mpim"]),
        "team": st.just("T0001"),
        "client_msg_id": st.uuids().map(str),
        "files": st.lists(
            st.fixed_dictionaries({"id": st.just("F1"), "name": TEXT, "title": TEXT}), max_size=1
        ),
        "edited": st.fixed_dictionaries({"user": st.just("U1"), "ts": st.just("1700000000.1")}),
        "blocks": st.just([{"type": "rich_text", "elements": []}]),
    },
)
MESSAGE_KEYS = ["type", "subtype", "channel", "user", "text", "ts", "thread_ts", "event_ts",
                "channel_type", "bot_id", "team", "files", "edited", "message", "previous_message",
                "deleted_ts", "hidden", "attachments", "blocks", "bot_profile"]  # fmt: skip
ENVELOPE_KEYS = ["type", "event", "event_id", "team_id", "api_app_id", "authorizations",
                 "event_time", "token"]  # fmt: skip


@dataclass
class Body:
    envelope: dict[str, Any]
    well_formed: bool


@st.composite
def bodies(draw: st.DrawFn) -> Body:
    """A well-formed message event, or one with some of its fields (or its envelope's)
    replaced by any JSON value, a tricky one, or one nested deep."""
    event: dict[str, Any] = dict(draw(WELL_FORMED))
    envelope: dict[str, Any] = {"type": "event_callback", "team_id": "T0001", "event": event}
    well_formed = draw(st.booleans())
    if not well_formed:
        event["type"] = draw(st.sampled_from(["message", "app_mention", "member_joined_channel"]))
        event["subtype"] = draw(
            st.sampled_from([None, "message_changed", "message_deleted", "bot_message"])
        )
        values = ANY | DEEP | st.sampled_from(TRICKY)
        for key in draw(st.lists(st.sampled_from(MESSAGE_KEYS), min_size=1, max_size=4)):
            event[key] = draw(values)
        for key in draw(st.lists(st.sampled_from(ENVELOPE_KEYS), max_size=2)):
            envelope[key] = draw(values)
    return Body(envelope, well_formed)


def _stamp(body: Body) -> tuple[str, str] | None:
    """Fill in what must be unique (ts, event id, channel); the key it must be stored under."""
    n = next(_serial)
    ts = f"{int(time.time()) - 30}.{n:06d}"
    event = body.envelope.get("event")
    if isinstance(event, dict):
        event.setdefault("ts", ts)
        event.setdefault("event_ts", ts)
        event.setdefault("channel", VALID_CHANNELS[n % len(VALID_CHANNELS)] + "X")
    body.envelope.setdefault("event_id", f"EvP{n:08d}")
    if not body.well_formed:
        return None
    assert isinstance(event, dict)
    event["channel"] = VALID_CHANNELS[n % len(VALID_CHANNELS)]
    return event["channel"], ts


class _Errors(logging.Handler):
    """Errors logged on the way in (not by the reply jobs some events start, which talk to
    the model stand-in in the background)."""

    INGRESS = ("app.routes.", "app.slack.", "app.db.")

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(self.INGRESS):
            self.records.append(record)


@contextlib.contextmanager
def served(slack: FakeSlack, model: FakeModel, database_url: str) -> Iterator[str]:
    """tomo under uvicorn on 127.0.0.1 in a thread; yields its base URL."""
    app = create_app(
        tomo_settings(slack, model, database_url, MIN_WAIT_SECONDS=3600, LOG_LEVEL="WARNING")
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=0, log_config=None, lifespan="on", loop="asyncio"
        )
    )
    thread = threading.Thread(target=server.run, name="tomo-under-test")
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "tomo did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)


def _stored(database_url: str) -> set[tuple[str, str]]:
    url = database_url.replace("postgres://", "postgresql://", 1)
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            return {
                (r[0], r[1]) for r in connection.execute(text("SELECT channel, ts FROM message"))
            }
    finally:
        engine.dispose()


def test_no_body_gets_a_5xx_and_every_well_formed_event_is_stored(
    slack: FakeSlack, model: FakeModel, database_url: str
) -> None:
    errors = _Errors()
    expected: set[tuple[str, str]] = set()
    sent = 0
    with (
        served(slack, model, database_url) as url,
        httpx.Client(base_url=url, timeout=WAIT_SECONDS) as client,
        ThreadPoolExecutor(max_workers=10) as pool,
    ):
        logging.getLogger().addHandler(errors)

        def post(body: Body) -> tuple[Body, int]:
            raw = json.dumps(body.envelope).encode()
            response = client.post(
                "/slack/events", content=raw, headers=sign(raw, secret=SIGNING_SECRET)
            )
            return body, response.status_code

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(batch=st.lists(bodies(), min_size=1, max_size=10))
        def deliver(batch: list[Body]) -> None:
            nonlocal sent
            keys = [_stamp(body) for body in batch]
            for (body, status), key in zip(pool.map(post, batch), keys, strict=True):
                assert status < 500, body.envelope
                if key is not None:
                    assert status == 200, body.envelope
                    expected.add(key)
            sent += len(batch)

        try:
            deliver()
            health = client.get("/healthz")
        finally:
            logging.getLogger().removeHandler(errors)
    assert health.status_code == 200, health.text
    assert sent >= 3 * EXAMPLES  # a few at once: well-formed and malformed share commits
    missing = expected - _stored(database_url)
    assert not missing, f"{len(missing)} of {len(expected)} well-formed events were not stored"
    assert not errors.records, [r.getMessage() for r in errors.records[:5]]
