"""A workspace that installs tomo again after an uninstall loses no message (docs/data-and-
privacy.md#installing-it-again): an event Slack delivers to tomo's bot user after the uninstall (by
its event_time) proves the install, lifts the "workspace gone" mark in the database and is
stored; a late retry of an event from before the uninstall, or the uninstall's own events,
lift nothing. Slack calls wait until the token works again; then what is owed is answered."""

from __future__ import annotations

import time

from tests.conftest import StartTomo, Tomo, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack


async def erased(tomo: Tomo) -> bool:
    rows = await tomo.rows("SELECT done_at FROM erasure WHERE scope = 'team'")
    return bool(rows) and all(r["done_at"] is not None for r in rows)


async def uninstall(tomo: Tomo, *, at: int) -> None:
    """What Slack sends when the app is uninstalled: tokens_revoked naming the bot's user,
    then app_uninstalled (api.slack.com/events/tokens_revoked, /events/app_uninstalled)."""
    revoked = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}}
    assert (await tomo.event(revoked, event_time=at)).status_code == 200
    assert (await tomo.event({"type": "app_uninstalled"}, event_time=at)).status_code == 200
    await wait_for(lambda: erased(tomo), timeout=60, what="the erasure")


async def test_a_reinstall_loses_nothing_between_it_and_the_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    uninstalled_at = int(time.time()) - 60  # Slack's clock, whole seconds
    async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:
        await tomo.message("before", channel="C1")
        await uninstall(tomo, at=uninstalled_at)
        slack.refuse_token()  # the old token stays revoked
        calls = len(slack.calls)
        # A late retry of an event from before the uninstall proves nothing.
        late = await tomo.message("late", channel="C1", event_time=uninstalled_at - 5)
        # The uninstall's own events, delivered again, lift nothing either.
        again = {"type": "app_uninstalled"}
        assert (await tomo.event(again, event_time=uninstalled_at)).status_code == 200
        still_gone = await tomo.rows("SELECT reason FROM erasure WHERE scope = 'team'")
        stored_late = await tomo.rows("SELECT ts FROM message")
        # Installed again: Slack delivers a mention to tomo's bot user.
        between = await tomo.message(
            "<@UBOT> are you back?",
            channel="C2",
            kind="app_mention",
            event_time=uninstalled_at + 30,
        )
        stored = await tomo.rows("SELECT ts FROM message")
        marks = await tomo.rows("SELECT * FROM erasure")
        timers = await tomo.timers("judgment", "reply")
        # Nothing but auth.test goes to Slack, nothing to the model, while the token is refused.
        await wait_for(
            lambda: "auth.test" in {method for method, _ in slack.calls[calls:]},
            timeout=60,
            what="auth.test asked again",
        )
        asked = {method for method, _ in slack.calls[calls:]}
        model_calls = len(model.requests)
    assert still_gone and stored_late == [] and late
    assert stored == [{"ts": between}] and marks == [] and timers == []
    assert asked == {"auth.test"} and model_calls == 0

    # The operator restarts tomo with the new token; a mention in its first second.
    slack.refuse_token(None)
    async with start_tomo(wait_identity=False, MIN_WAIT_SECONDS=0.3) as tomo:
        first = await tomo.message(
            "<@UBOT> hello?", channel="C1", kind="app_mention", event_time=int(time.time())
        )
        posts = await slack.wait_for_posts(2, timeout=120)
        stored = await tomo.rows("SELECT ts FROM message WHERE user_id = 'U1' ORDER BY ts")
    assert stored == sorted([{"ts": between}, {"ts": first}], key=lambda r: r["ts"])
    assert sorted((p["channel"], p.get("thread_ts")) for p in posts) == [
        ("C1", first),
        ("C2", between),
    ]


async def test_a_mention_in_the_first_second_after_a_restart_is_stored_and_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """No event between the reinstall and the restart: the restart's own mention is the
    proof, before the start-up's auth.test has answered."""
    async with start_tomo() as tomo:
        await uninstall(tomo, at=int(time.time()) - 60)
    slack.delay("auth.test", 2.0)  # the start-up's auth.test answers after the mention
    async with start_tomo(wait_identity=False) as tomo:
        ts = await tomo.message("<@UBOT> you there?", kind="app_mention")
        stored = await tomo.rows("SELECT ts FROM message")
        marks = await tomo.rows("SELECT * FROM erasure")
        posts = await slack.wait_for_posts(1, timeout=120)
    assert stored == [{"ts": ts}] and marks == []
    assert posts[0]["thread_ts"] == ts and posts[0]["text"] == "ok"


async def test_a_reinstall_while_the_deletion_runs_is_delivered_again_and_then_stored(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    """The deletion is not finished: storing now would lose the message to it, so the event
    is answered 500 (Slack delivers it again), its id not kept; stored once the deletion is
    done."""
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        gone_at = time.time() - 60
        async with tomo.runtime.engine.begin() as connection:
            await connection.exec_driver_sql(
                "INSERT INTO erasure (scope, target, reason, requested_at) "
                f"VALUES ('team', 'T0001', 'app_uninstalled', {gone_at})"
            )
        ts = next_ts()
        event = {"type": "message", "channel": "C1", "user": "U1", "text": "back", "ts": ts}
        first = await tomo.event(event, event_id="EvBACK1", event_time=int(gone_at) + 10)
        seen = await tomo.rows("SELECT * FROM seen_event WHERE event_id = 'EvBACK1'")
        await tomo.runtime.eraser.run()
        second = await tomo.event(event, event_id="EvBACK1", event_time=int(gone_at) + 10, retry=1)
        stored = await tomo.rows("SELECT ts FROM message")
        marks = await tomo.rows("SELECT * FROM erasure")
        # The deletion held the token refused; Slack takes it: the message gets its timer.
        await wait_for(lambda: tomo.timers("judgment"), timeout=30, what="its judgment timer")
    assert first.status_code == 500 and seen == []
    assert second.status_code == 200 and stored == [{"ts": ts}] and marks == []


async def test_a_reply_refused_by_slack_stays_owed_and_is_posted_when_the_token_works(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A reply whose post Slack refuses (the token revoked meanwhile) is owed, not failed:
    once Slack takes the token again, it is posted."""
    async with start_tomo() as tomo:
        tomo.runtime.identity.auth_retry_seconds = 0.2
        slack.fail("chat.postMessage", error="token_revoked")
        ts = next_ts()
        slack.add_message("C1", ts=ts, text="<@UBOT> a question", user="U1")
        await tomo.message("<@UBOT> a question", kind="app_mention", ts=ts)
        await wait_for(
            lambda: _status(tomo, "interrupted"), timeout=30, what="the reply owed again"
        )
        tomo.runtime.identity.gone("token_revoked")  # as the next check of the token finds
        tomo.runtime.slack_access.resume()
        posts = await slack.wait_for_posts(1, timeout=120)
    assert posts[0]["thread_ts"] == ts


async def _status(tomo: Tomo, status: str) -> bool:
    rows = await tomo.rows("SELECT status FROM reply")
    return [r["status"] for r in rows] == [status]
