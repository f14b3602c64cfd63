"""tomo where Slack puts AI apps (docs/how-tomo-works.md#ai-app): opening its messages tab gets
the suggested prompts (in the person's language where tomo can tell, else the manifest's
English ones), set in the background, never on the acknowledgement's path; a DM thread tomo
answers gets a title; a DM is still answered where it was written.

The events: `app_home_opened` with `tab: messages` as tests/fixtures/slack/app_home_opened.json
(Slack's event reference), and `assistant_thread_started` as in bolt-python's
tests/scenario_tests/test_events_assistant.py (`assistant_thread`: user_id, context,
channel_id, thread_ts)."""

from __future__ import annotations

import json
from typing import Any

from app.assistant.words import suggested
from app.db.migrate import PROJECT_ROOT
from tests.assistant.helpers import answer_by_purpose, settled
from tests.conftest import StartTomo, Tomo, later_ts, next_ts, wait_for
from tests.fakes import FakeModel, FakeSlack

FIXTURE = PROJECT_ROOT / "tests" / "fixtures" / "slack" / "app_home_opened.json"


def messages_tab_opened(user: str = "U1", channel: str = "D1") -> dict[str, Any]:
    event: dict[str, Any] = json.loads(FIXTURE.read_text())["event"]
    return event | {"user": user, "channel": channel}


def thread_started(thread_ts: str, user: str = "U1", channel: str = "D1") -> dict[str, Any]:
    return {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": user,
            "context": {"channel_id": "C1", "team_id": "T0001", "enterprise_id": None},
            "channel_id": channel,
            "thread_ts": thread_ts,
        },
        "event_ts": thread_ts,
    }


async def prompts_set(slack: FakeSlack, n: int = 1) -> list[dict[str, Any]]:
    await wait_for(lambda: len(slack.prompts()) >= n, what="suggested prompts")
    return slack.prompts()


async def test_opening_the_messages_tab_sets_the_prompts_off_the_ack_path(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    slack.delay("users.info", 1.0)  # the person's locale comes late: the ack does not wait
    async with start_tomo() as tomo:
        answered = await tomo.event(messages_tab_opened())
        set_at_ack = len(slack.prompts())
        (offered,) = await prompts_set(slack)
        home_tab = await tomo.event(messages_tab_opened() | {"tab": "home"})
        again = await tomo.event(messages_tab_opened(), event_id="EvSAME")
        redelivered = await tomo.event(messages_tab_opened(), event_id="EvSAME")
        await prompts_set(slack, 2)
    assert answered.status_code == home_tab.status_code == 200
    assert again.status_code == redelivered.status_code == 200
    assert set_at_ack == 0
    title, prompts = suggested("en")
    assert offered == {"channel": "D1", "thread_ts": None, "title": title, "prompts": prompts}
    (info, *_) = slack.calls_to("users.info")
    assert info["user"] == "U1" and str(info["include_locale"]).lower() in ("1", "true")
    assert len(slack.prompts()) == 2  # not for the home tab, once for a redelivered event


async def test_the_prompts_are_in_the_persons_language(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    slack.add_channel("D2", "", is_im=True, user="U2")
    slack.add_user("U2", name="bob")
    slack.set_locale("U1", "ja-JP")
    slack.fail("users.info", error="ratelimited", times=100)  # for Bob: his messages tell
    async with start_tomo() as tomo:
        await tomo.message("おはようございます、今日もよろしく", user="U2", channel="C1")
        slack.heal()
        await tomo.event(messages_tab_opened("U1", "D1"))
        (alice,) = await prompts_set(slack)
        slack.fail("users.info", error="ratelimited")
        await tomo.event(messages_tab_opened("U2", "D2"))
        _, bob = await prompts_set(slack, 2)
    assert (alice["title"], alice["prompts"]) == suggested("ja")
    assert (bob["title"], bob["prompts"]) == suggested("ja")


async def test_a_thread_started_in_the_older_assistant_view_gets_prompts_for_that_thread(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    thread = next_ts()
    async with start_tomo() as tomo:
        assert (await tomo.event(thread_started(thread))).status_code == 200
        (offered,) = await prompts_set(slack)
        broken = await tomo.event(thread_started(thread) | {"assistant_thread": "none"})
    assert offered["channel"] == "D1" and offered["thread_ts"] == thread
    assert (offered["title"], offered["prompts"]) == suggested("en")
    assert broken.status_code == 200 and len(slack.prompts()) == 1


async def dm(tomo: Tomo, text: str, *, thread_ts: str | None = None) -> str:
    ts = later_ts()  # after tomo's last answer
    tomo.slack.add_message("D1", ts=ts, text=text, user="U1", thread_ts=thread_ts)
    return await tomo.message(text, channel="D1", channel_type="im", ts=ts, thread_ts=thread_ts)


async def test_a_dm_thread_tomo_answers_gets_a_title_once_and_a_dm_is_answered_where_written(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")
    answer_by_purpose(model, reply="sure")
    async with start_tomo() as tomo:
        top = await dm(tomo, "hello at the top")
        (at_top,) = await slack.wait_for_posts(1)
        await settled(tomo)
        opening = "can you help me plan the team offsite in spring, somewhere near the sea?"
        parent = await dm(tomo, opening)
        await slack.wait_for_posts(2)
        await wait_for(lambda: tomo.rows("SELECT 1 FROM reply WHERE id = 2 AND status = 'posted'"))
        await dm(tomo, "in the thread now", thread_ts=parent)
        await slack.wait_for_posts(3)
        await wait_for(lambda: tomo.rows("SELECT 1 FROM reply WHERE id = 3 AND status = 'posted'"))
        await wait_for(lambda: slack.titles(), what="the thread's title")
        await dm(tomo, "and again", thread_ts=parent)
        await slack.wait_for_posts(4)
        await wait_for(lambda: tomo.rows("SELECT 1 FROM reply WHERE id = 4 AND status = 'posted'"))
    posts = slack.posts()
    assert at_top["thread_ts"] is None and top  # a DM's top level is answered at the top level
    assert [p["thread_ts"] for p in posts] == [None, None, parent, parent]
    assert slack.titles() == {("D1", parent): opening[:59].rstrip() + "…"}
    assert len(slack.calls_to("assistant.threads.setTitle")) == 1  # with the first reply only
