"""POST /slack/events never answers 5xx to what it is sent: odd headers get 401, odd bodies
400, and signed events with values of the wrong type or an impossible ts are acknowledged and
logged as rejected, while the good events around them are stored."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest

from tests.conftest import SIGNING_SECRET, StartTomo, Tomo, next_ts
from tests.signing import sign


def message(**fields: Any) -> dict[str, Any]:
    """A channel message event as Slack sends it (api.slack.com/events/message), ids replaced;
    `fields` replace or add fields."""
    ts = next_ts()
    event = {
        "type": "message",
        "channel": "C1",
        "user": "U1",
        "text": "hello",
        "ts": ts,
        "event_ts": ts,
        "channel_type": "channel",
    }
    event.update(fields)
    return event


async def stored(tomo: Tomo) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT channel, ts, user_id, text FROM message ORDER BY ts")


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Slack-Request-Timestamp": "9" * 5000, "X-Slack-Signature": "v0=" + "0" * 64},
        {"X-Slack-Request-Timestamp": b"\xb2", "X-Slack-Signature": "v0=" + "0" * 64},
        {"X-Slack-Request-Timestamp": b"17\xb2", "X-Slack-Signature": b"v0=\xe9\xe9"},
        {"X-Slack-Request-Timestamp": str(int(time.time())), "X-Slack-Signature": b"v0=\xff"},
        {"X-Slack-Request-Timestamp": "", "X-Slack-Signature": ""},
    ],
    ids=["5000-digits", "superscript-two", "non-ascii-both", "non-ascii-signature", "empty"],
)
async def test_odd_signature_headers_get_401(
    start_tomo: StartTomo, headers: dict[str, Any]
) -> None:
    body = json.dumps({"type": "event_callback", "event": message()}).encode()
    async with start_tomo() as tomo:
        response = await tomo.client.post("/slack/events", content=body, headers=headers)
        assert await stored(tomo) == []
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("length", "status"), [(b"\xb2", 200), ("9" * 5000, 413), ("99999999", 413), ("abc", 200)]
)
async def test_an_odd_content_length_is_no_error(
    start_tomo: StartTomo, length: str | bytes, status: int
) -> None:
    body = b'{"type":"url_verification","challenge":"x"}'
    async with start_tomo() as tomo:
        headers: dict[str, Any] = sign(body, secret=SIGNING_SECRET)
        response = await tomo.client.post(
            "/slack/events", content=body, headers=headers | {"Content-Length": length}
        )
    assert response.status_code == status


async def test_signed_bodies_that_are_not_json_objects_get_400(start_tomo: StartTomo) -> None:
    deep = b'{"type":"event_callback","event":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    bodies = {
        "invalid utf-8": b'{"type":"event_callback","text":"\xff\xfe"}',
        "nested 100,000 deep": deep,
        "array nested deep": b"[" * 200_000 + b"]" * 200_000,
        "challenge not a string": b'{"type":"url_verification","challenge":{"a":[1]}}',
    }
    async with start_tomo() as tomo:
        answers = {
            name: await tomo.post_raw(body, sign(body, secret=SIGNING_SECRET))
            for name, body in bodies.items()
        }
        health = await tomo.client.get("/healthz")
    assert {name: r.status_code for name, r in answers.items()} == dict.fromkeys(bodies, 400)
    assert answers["invalid utf-8"].json() == {"error": "body is not JSON"}
    assert health.status_code == 200


WRONG_TYPES: dict[str, dict[str, Any]] = {
    "user an object": {"user": {"id": "U1", "name": "alice"}},
    "user a number": {"user": 12345},
    "bot_id a dict": {"bot_id": {"id": "B1"}},
    "subtype a list": {"subtype": ["bot_message"]},
    "channel_type a number": {"channel_type": 7},
    "team a list": {"team": ["T0001"]},
    "channel an object": {"channel": {"id": "C1"}},
    "channel too long": {"channel": "C" * 200},
    "ts a number": {"ts": 1700000000.0001},
    "ts nan": {"ts": "nan"},
    "ts abc": {"ts": "abc"},
    "ts inf": {"ts": "inf"},
    "ts 1e300": {"ts": "1e300"},
    "ts of 32 digits": {"ts": "1" * 32},
    "ts in the far future": {"ts": "9999999999.000100"},
    "ts an hour ahead": {"ts": f"{int(time.time()) + 3600}.000100"},
    "ts negative": {"ts": "-1700000000.000100"},
    "thread_ts inf": {"thread_ts": "inf"},
    "thread_ts an object": {"thread_ts": {"ts": "1"}},
}


@pytest.mark.parametrize("fields", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
async def test_a_message_with_unusable_keys_is_acknowledged_and_logged_as_rejected(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture, fields: dict[str, Any]
) -> None:
    async with start_tomo() as tomo:
        caplog.set_level(logging.WARNING)
        bad = await tomo.event(message(**fields))
        good = await tomo.message("still here")
        rows = await stored(tomo)
        health = await tomo.client.get("/healthz")
    assert bad.status_code == 200
    assert [r["ts"] for r in rows] == [good]
    assert any("rejected" in r.getMessage() for r in caplog.records), caplog.text
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert health.status_code == 200


TOLERATED: dict[str, dict[str, Any]] = {
    "text an object": {"text": {"type": "mrkdwn", "text": "hi"}},
    "files a dict": {"files": {"name": "a.png"}},
    "files of strings": {"files": ["a.png", 3]},
    "file name an object": {"files": [{"name": {"x": 1}, "title": "Plan"}]},
    "edited a string": {"edited": "yesterday"},
}


@pytest.mark.parametrize("fields", TOLERATED.values(), ids=TOLERATED.keys())
async def test_odd_content_is_read_as_less_text_and_the_message_kept(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture, fields: dict[str, Any]
) -> None:
    event = message(**fields)
    async with start_tomo() as tomo:
        response = await tomo.event(event)
        rows = await stored(tomo)
    assert response.status_code == 200
    assert [r["ts"] for r in rows] == [event["ts"]]
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


async def test_odd_edits_and_deletions_change_nothing_and_raise_nothing(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture
) -> None:
    async with start_tomo() as tomo:
        ts = await tomo.message("original")
        changed = {"type": "message", "subtype": "message_changed", "channel": "C1"}
        answers = [
            await tomo.event({**changed, "message": "not an object"}),
            await tomo.event({**changed, "message": {"ts": "inf", "text": "x"}}),
            await tomo.event({**changed, "message": {"ts": ts, "text": 5, "edited": "x"}}),
            await tomo.event(
                {**changed, "message": {"ts": ts, "text": "new", "edited": {"ts": "abc"}}}
            ),
            await tomo.event(
                {"type": "message", "subtype": "message_deleted", "channel": "C1", "deleted_ts": 7}
            ),
            await tomo.event(
                {
                    "type": "message",
                    "subtype": "message_deleted",
                    "channel": "C1",
                    "previous_message": "gone",
                }
            ),
        ]
        rows = await tomo.rows("SELECT text, deleted, edited_at FROM message")
    assert [a.status_code for a in answers] == [200] * len(answers)
    # The last readable edit wins; its `edited.ts` was unreadable, so the event's time is used.
    assert rows[0]["text"] == "new" and not rows[0]["deleted"]
    assert rows[0]["edited_at"] is not None and abs(rows[0]["edited_at"] - time.time()) < 60
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"


@pytest.mark.parametrize(
    "event_id", [{"id": "Ev1"}, ["Ev1"], "Ev" + "1" * 100, "Ev\x001", 7], ids=repr
)
async def test_an_event_id_that_is_not_one_is_acknowledged_and_rejected(
    start_tomo: StartTomo, caplog: pytest.LogCaptureFixture, event_id: Any
) -> None:
    async with start_tomo() as tomo:
        caplog.set_level(logging.WARNING)
        envelope = {
            "type": "event_callback",
            "team_id": "T0001",
            "event_id": event_id,
            "event": message(),
        }
        response = await tomo.send(envelope)
        rows = await stored(tomo)
    assert response.status_code == 200
    assert rows == []
    assert any("event_id" in r.getMessage() for r in caplog.records)
