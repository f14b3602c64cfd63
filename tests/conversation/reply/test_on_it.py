"""On it (docs/how-tomo-works.md#reply): a mention or DM shows that tomo is working — the thread
status, else a reaction — before the reply, cleared after it whatever happened, and never left
behind."""

from __future__ import annotations

import asyncio
from typing import Any

from app.conversation.reply.words import apology
from app.slack.web.client import SlackClient
from tests.conftest import StartTomo, Tomo, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack

SIGNS = ("assistant.threads.setStatus", "reactions.add", "reactions.remove", "chat.postMessage")


def story(slack: FakeSlack) -> list[tuple[str, str]]:
    """The sign and post calls in the order Slack received them, with what each said."""
    told = {"assistant.threads.setStatus": "status", "chat.postMessage": "text"}
    return [
        (method, str(params.get(told.get(method, "name"), "")))
        for method, params in slack.calls
        if method in SIGNS
    ]


async def mention(tomo: Tomo, text: str = "<@UBOT> what's up?", **fields: Any) -> str:
    ts = next_ts()
    tomo.slack.add_message(
        fields.get("channel", "C1"), ts=ts, text=text, user="U1", thread_ts=fields.get("thread_ts")
    )
    return await tomo.message(text, ts=ts, **fields)


async def settled(tomo: Tomo, *, posts: int = 1) -> None:
    """Wait for the posts and for every sign to be cleared (and forgotten)."""
    await tomo.slack.wait_for_posts(posts)

    async def no_sign_left() -> bool:
        return not await tomo.rows("SELECT 1 FROM on_it")

    await wait_for(no_sign_left, what="the sign cleared")
    await asyncio.sleep(0.1)


async def test_a_mention_shows_the_thread_status_first_and_clears_it_after_the_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("all good!")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        asked = await mention(tomo)
        await settled(tomo)
    (status, post, cleared) = story(slack)
    assert status[0] == "assistant.threads.setStatus" and status[1]  # "is thinking…"
    assert post == ("chat.postMessage", "all good!")
    assert cleared == ("assistant.threads.setStatus", "")
    (set_call, _clear) = slack.calls_to("assistant.threads.setStatus")
    assert (set_call["channel_id"], set_call["thread_ts"]) == ("C1", asked)
    assert slack.thread_status("C1", asked) == "" and slack.reactions("C1", asked) == []


async def test_a_direct_message_answered_outside_a_thread_gets_a_reaction(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("hi!")
    slack.add_channel("D1", "", is_im=True, user="U1")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        asked = await mention(tomo, "hello tomo", channel="D1", channel_type="im")
        await settled(tomo)
    assert story(slack) == [
        ("reactions.add", "eyes"),
        ("chat.postMessage", "hi!"),
        ("reactions.remove", "eyes"),
    ]
    (added,) = slack.calls_to("reactions.add")
    assert (added["channel"], added["timestamp"]) == ("D1", asked)
    assert slack.reactions("D1", asked) == []


async def test_where_slack_refuses_the_status_a_reaction_shows_it_from_then_on(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("first", "second")
    slack.fail("assistant.threads.setStatus", error="missing_scope")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        first = await mention(tomo)
        await settled(tomo)
        second = await mention(tomo, "<@UBOT> again?")
        await settled(tomo, posts=2)
    assert story(slack) == [
        ("assistant.threads.setStatus", "is thinking…"),  # refused
        ("reactions.add", "eyes"),
        ("chat.postMessage", "first"),
        ("reactions.remove", "eyes"),
        ("reactions.add", "eyes"),  # not asked again
        ("chat.postMessage", "second"),
        ("reactions.remove", "eyes"),
    ]
    assert [c["timestamp"] for c in slack.calls_to("reactions.add")] == [first, second]
    assert slack.reactions("C1", first) == slack.reactions("C1", second) == []


async def test_slack_refusing_every_sign_does_not_stop_the_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("still here")
    slack.fail("assistant.threads.setStatus", status=500)
    slack.fail("reactions.add", error="not_reactable")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await mention(tomo)
        (post,) = await slack.wait_for_posts(1)
        await settled(tomo)
    assert post["text"] == "still here"
    assert [m for m, _ in story(slack)][-2:] == ["reactions.add", "chat.postMessage"]
    assert not slack.calls_to("reactions.remove")  # nothing was shown, nothing to clear


async def test_the_sign_is_cleared_when_the_reply_fails(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.fail(status=500, times=5)
    async with start_tomo(MIN_WAIT_SECONDS=30, LLM_MAX_RETRIES=0) as tomo:
        asked = await mention(tomo)
        await settled(tomo)  # the apology
        slack.fail("chat.postMessage", error="not_in_channel")
        other = await mention(tomo, "<@UBOT> and here?", channel="C2")
        await wait_for(
            lambda: tomo.rows(
                "SELECT 1 FROM reply WHERE trigger_ts = :t AND status = 'failed'", t=other
            ),
            what="the refused post",
        )
        await wait_for(lambda: slack.thread_status("C2", other) == "", what="the status cleared")
        await asyncio.sleep(0.2)
        left = await tomo.rows("SELECT * FROM on_it")
    assert slack.posts()[0]["text"] == apology("en") and slack.thread_status("C1", asked) == ""
    statuses = [c["status"] for c in slack.calls_to("assistant.threads.setStatus")]
    assert statuses == ["is thinking…", "", "is thinking…", ""]
    assert left == []


async def test_an_autonomous_reply_shows_no_sign(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.responder = lambda request: (
        '{"should_respond": true, "reason": "t", "confidence": 1, "delay_seconds": 0}'
        if '"should_respond"' in str(request["messages"][0]["content"])
        else "joining in"
    )
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("what a day")
        await slack.wait_for_posts(1)
        await asyncio.sleep(0.3)
    assert [m for m, _ in story(slack)] == ["chat.postMessage"]


async def test_a_sign_left_up_by_a_stopped_tomo_is_cleared_at_the_next_start(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    model.enqueue("done")
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        asked = await mention(tomo)
        await settled(tomo)
        # As if tomo had been killed while its sign was up: in Slack, and remembered.
        dm = next_ts()
        slack.add_message("C2", ts=dm, text="<@UBOT> hm?", user="U1")
        client = SlackClient(token="xoxb-test", base_url=slack.url)
        await client.add_reaction(channel="C2", ts=dm, name="eyes")
        await client.set_thread_status(channel="C1", thread_ts=asked, status="is thinking…")
        await client.close()
        async with tomo.runtime.engine.begin() as connection:
            await connection.exec_driver_sql(
                "INSERT INTO on_it (channel, ts, thread_ts, kind, set_at) VALUES "
                f"('C2', '{dm}', '', 'reaction', 0), ('C1', '{asked}', '{asked}', 'status', 0)"
            )
    assert slack.reactions("C2", dm) == ["eyes"]

    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await wait_for(
            lambda: not slack.reactions("C2", dm) and not slack.thread_status("C1", asked),
            what="the leftovers cleared",
        )
        await wait_for(lambda: _empty(tomo), what="the leftovers forgotten")
    assert len(slack.posts()) == 1  # nothing answered twice on the way


async def _empty(tomo: Tomo) -> bool:
    return not await tomo.rows("SELECT 1 FROM on_it")
