"""POST /slack/events: signature first, size and JSON checks, dedupe, recording."""

import json
import time

from sqlalchemy import text

from tests.conftest import SIGNING_SECRET, StartTomo, next_ts
from tests.conversation.reply.test_reply import answer_by_purpose
from tests.fakes import FakeModel, FakeSlack
from tests.signing import sign


async def test_url_verification_answers_the_challenge(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        response = await tomo.send({"type": "url_verification", "challenge": "abc123"})
    assert response.status_code == 200
    assert response.json() == {"challenge": "abc123"}


async def test_unsigned_stale_and_tampered_requests_get_401_and_store_nothing(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo() as tomo:
        body = json.dumps(
            {
                "type": "event_callback",
                "event_id": "Ev1",
                "event": {
                    "type": "message",
                    "channel": "C1",
                    "user": "U1",
                    "text": "hi",
                    "ts": next_ts(),
                },
            }
        ).encode()
        unsigned = await tomo.post_raw(body, {"Content-Type": "application/json"})
        stale = await tomo.post_raw(
            body, sign(body, secret=SIGNING_SECRET, timestamp=int(time.time()) - 600)
        )
        tampered = await tomo.post_raw(
            body.replace(b"hi", b"yo"), sign(body, secret=SIGNING_SECRET)
        )
        wrong_secret = await tomo.post_raw(body, sign(body, secret="not-the-secret"))
        challenge = await tomo.post_raw(
            b'{"type":"url_verification","challenge":"x"}', {"Content-Type": "application/json"}
        )
        rows = await tomo.rows("SELECT count(*) AS n FROM message")
        seen = await tomo.rows("SELECT count(*) AS n FROM seen_event")
    for response in (unsigned, stale, tampered, wrong_secret, challenge):
        assert response.status_code == 401
    assert rows[0]["n"] == 0 and seen[0]["n"] == 0


async def test_oversized_body_is_413_and_non_json_is_400(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        big = b'{"type":"event_callback","pad":"' + b"x" * (1024 * 1024) + b'"}'
        too_big = await tomo.post_raw(big, sign(big, secret=SIGNING_SECRET))
        not_json = await tomo.post_raw(b"hello", sign(b"hello", secret=SIGNING_SECRET))
        array = await tomo.post_raw(b"[1,2]", sign(b"[1,2]", secret=SIGNING_SECRET))
    assert too_big.status_code == 413
    assert not_json.status_code == 400
    assert array.status_code == 400
    assert "JSON" in not_json.json()["error"]


async def test_an_event_that_could_not_be_recorded_gets_500_and_a_get_405(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo() as tomo:
        await tomo.runtime.recorder.stop()  # every record() now fails: nothing can be stored
        response = await tomo.event(
            {"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": next_ts()}
        )
        wrong_method = await tomo.client.get("/slack/events")
    assert response.status_code == 500
    assert response.json() == {"error": "could not record the event"}
    assert wrong_method.status_code == 405


async def test_rate_limited_and_unknown_types_are_acknowledged(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        limited = await tomo.send(
            {"type": "app_rate_limited", "team_id": "T0001", "minute_rate_limited": 1}
        )
        unknown = await tomo.send({"type": "something_new"})
    assert limited.status_code == 200
    assert unknown.status_code == 200


async def test_messages_of_every_kind_are_recorded(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        top = await tomo.message("hello everyone")
        reply = await tomo.message("a reply", thread_ts=top, user="U2")
        await tomo.message(
            "see file", subtype="file_share", files=[{"name": "plan.pdf", "id": "F1"}]
        )
        await tomo.message("also to channel", thread_ts=top, subtype="thread_broadcast")
        await tomo.message("from a bot", user=None, subtype="bot_message", bot_id="B9")
        await tomo.message("dm text", channel="D1", channel_type="im")
        rows = await tomo.rows("SELECT * FROM message ORDER BY ts")
    by_text = {r["text"]: r for r in rows}
    assert len(rows) == 6
    assert by_text["a reply"]["thread_ts"] == top and by_text["a reply"]["ts"] == reply
    assert by_text["hello everyone"]["thread_ts"] == ""
    assert "see file\n[file: plan.pdf]" in by_text
    assert by_text["also to channel"]["route"] == "judgment"
    bot = by_text["from a bot"]
    assert bot["user_id"] is None and bot["bot_id"] == "B9" and bot["route"] == "record"
    assert by_text["dm text"]["channel"] == "D1" and by_text["dm text"]["route"] == "reply"


async def test_edits_and_deletes(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await tomo.message("first version")
        gone = await tomo.message("to be deleted")
        edit = {
            "type": "message",
            "subtype": "message_changed",
            "channel": "C1",
            "message": {
                "type": "message",
                "user": "U1",
                "text": "second version",
                "ts": ts,
                "edited": {"user": "U1", "ts": next_ts()},
            },
            "previous_message": {"ts": ts, "text": "first version"},
            "ts": next_ts(),
            "event_ts": next_ts(),
        }
        delete = {
            "type": "message",
            "subtype": "message_deleted",
            "channel": "C1",
            "deleted_ts": gone,
            "ts": next_ts(),
        }
        assert (await tomo.event(edit)).status_code == 200
        assert (await tomo.event(delete)).status_code == 200
        rows = {r["ts"]: r for r in await tomo.rows("SELECT * FROM message")}
        removals = await tomo.rows("SELECT ts FROM removal")
    assert rows[ts]["text"] == "second version" and rows[ts]["edited_at"] is not None
    assert gone not in rows  # deleted, not only hidden
    assert removals == [{"ts": gone}]  # only where it was, dated for the memory job
    assert len(rows) == 1  # the edit and delete events are not messages of their own


async def test_redelivery_and_retries_are_not_processed_twice(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = next_ts()
        event = {"type": "message", "channel": "C1", "user": "U1", "text": "once", "ts": ts}
        first = await tomo.event(event, event_id="EvSAME")
        jobs_after_first = await tomo.runtime.timers.list()
        await tomo.runtime.timers.remove("judgment:C1:")
        again = await tomo.event(event, event_id="EvSAME", retry=1)
        again2 = await tomo.event(event, event_id="EvSAME", retry=2)
        rows = await tomo.rows("SELECT count(*) AS n FROM message")
        jobs = [t.id for t in (await tomo.runtime.timers.list()) if t.kind == "judgment"]
    assert [r.status_code for r in (first, again, again2)] == [200, 200, 200]
    assert "judgment:C1:" in [t.id for t in jobs_after_first]
    assert rows[0]["n"] == 1
    assert jobs == []  # the duplicate did not schedule the judgment again


async def test_seen_event_ids_survive_a_restart(start_tomo: StartTomo) -> None:
    event = {"type": "message", "channel": "C1", "user": "U1", "text": "x", "ts": next_ts()}
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        assert (await tomo.event(event, event_id="EvRESTART")).status_code == 200
        # Forget the message: only the stored event id can now stop the redelivery.
        async with tomo.runtime.engine.begin() as connection:
            await connection.execute(text("DELETE FROM message"))
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        assert (await tomo.event(event, event_id="EvRESTART", retry=1)).status_code == 200
        rows = await tomo.rows("SELECT count(*) AS n FROM message")
    assert rows[0]["n"] == 0


async def test_mention_delivered_twice_is_processed_once(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        tomo.memory_timers.shutdown()  # keep the reply job pending so it can be counted
        ts = next_ts()
        await tomo.message("<@UBOT> hello", ts=ts, kind="app_mention")
        await tomo.message("<@UBOT> hello", ts=ts)
        rows = await tomo.rows("SELECT route, conversation_ts FROM message")
        seen = await tomo.rows("SELECT count(*) AS n FROM seen_event")
    assert rows == [{"route": "reply", "conversation_ts": ts}]
    assert seen[0]["n"] == 2


async def test_ack_does_not_depend_on_slack_or_the_model(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        for method in ("users.info", "conversations.replies", "chat.postMessage"):
            tomo.slack.fail(method, status=500, times=100)
        tomo.slack.delay("users.info", 5)
        for n in range(5):
            await tomo.message(f"message {n}", user="U2")
        rows = await tomo.rows("SELECT count(*) AS n FROM message")
        names = tomo.slack.calls_to("users.info")
    assert rows[0]["n"] == 5
    # Names are fetched off the ack path, once per person however many messages.
    assert len(names) <= 1


async def test_a_mention_right_after_start_is_one_before_auth_test_answers(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Slack is slow to answer auth.test at start-up; the first event's `authorizations` say
    who tomo is, so `<@UBOT>` in a plain `message` event is already a mention."""
    answer_by_purpose(model, reply="I'm here")
    slack.fail("auth.test", status=500, times=50)
    async with start_tomo(wait_identity=False, MIN_WAIT_SECONDS=60) as tomo:
        assert tomo.runtime.identity.user_id is None
        ts = await tomo.message("<@UBOT> are you up yet?")
        await slack.wait_for_posts(1)
        assert tomo.runtime.identity.user_id == "UBOT"
    [post] = slack.posts()
    assert post["thread_ts"] == ts and post["text"] == "I'm here"
