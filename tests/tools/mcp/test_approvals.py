"""Calls that wait for a person's approval (docs/tools.md#approvals), through the signed
endpoints with real LiteLLM, real slack-sdk and the SDK-built MCP stand-in: the call is not
made, a card asks the person the reply answers; Approve makes it exactly once (a double click,
two clicks at once, two runs of the job) and a reply goes on with its result; Deny, or no
decision in time (APPROVAL_SECONDS, lowered), declines it; anyone else is told only the asker
may decide."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from sqlalchemy import text

from app.conversation.reply.words import apology
from app.tools.mcp import approvals as mcp_approvals
from tests.conftest import StartTomo, Tomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.fakes.response_url import FakeResponseUrl
from tests.tools.mcp.approving import (
    approval_id_of,
    approval_state,
    approval_timers,
    card_of,
    card_updates,
    click,
    wait_state,
)
from tests.tools.mcp.helpers import looked_at, mention, settings, tool_results

pytestmark = pytest.mark.usefixtures("tracker")
ARGUMENTS = {"title": "ログインできない", "body": "Since Monday <!channel> `rm -rf`"}
ASKED = "I asked to create it; approve it on the card."
LINE = ":hourglass_flowing_sand: Waiting for <@U1>'s decision on the approval card before I go on."


def script(model: FakeModel, *after: str) -> None:
    model.enqueue(asks_for(tool_call("tracker__create_issue", ARGUMENTS)), ASKED, *after)


async def asked(
    tomo: Tomo, slack: FakeSlack, text: str = "file an issue: login"
) -> dict[str, object]:
    await looked_at(tomo)
    await mention(tomo, slack, f"<@UBOT> {text}")
    return card_of(slack)


async def test_the_call_waits_for_the_card_and_approve_makes_it_once_then_the_reply_goes_on(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    script(model, "Done: PROJ-7 is filed.")
    tracker.answer("create_issue", "Created PROJ-7")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        approval = approval_id_of(card)
        # Not made: the model was told it waits, the reply said so, a timer waits for the end.
        assert tracker.calls() == []
        (waiting,) = tool_results(model.requests[1])
        assert waiting.startswith("The call was not made") and "<@U1>" in waiting
        assert [p["text"] for p in slack.posts()][-2:] == [card["text"], f"{ASKED}\n\n{LINE}"]
        (timer,) = await approval_timers(tomo)
        assert timer.seconds_left is not None and 590 < timer.seconds_left <= 600
        shown = json.dumps(card["blocks"], ensure_ascii=False)
        assert "create_issue" in shown and "tracker" in shown and "<@U1>" in shown
        assert "ログインできない" in shown and "&lt;!channel&gt;" in shown  # in full, no ping
        url = hooks.new_url(kind="actions")
        await click(tomo, card, approve=True, response_url=url)
        await click(tomo, card, approve=True, response_url=url)  # a double click
        await wait_state(tomo, approval, "done")
        await wait_for(lambda: len(hooks.posts()) == 1, what="the second click's answer")
    assert tracker.calls() == [{"tool": "create_issue", "arguments": ARGUMENTS}]
    assert "already been decided" in hooks.posts()[0]["text"]
    assert hooks.posts()[0]["response_type"] == "ephemeral"
    assert slack.posts()[-1]["text"] == "Done: PROJ-7 is filed."
    went_on = model.requests[2]
    (result,) = tool_results(went_on)
    assert "approved the call" in result and "Created PROJ-7" in result
    assert "<<<untrusted tool result" in result
    called = went_on["messages"][-3]  # the call, then its result, then the time
    assert called["tool_calls"][0]["function"]["name"] == "tracker__create_issue"
    last = card_updates(slack, card)[-1]
    assert "the call was made" in last["text"] and "actions" not in str(last.get("blocks"))


async def test_only_the_person_asked_may_decide_told_in_their_language(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    script(model)
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack, "ログインの件、issue を作って")
        assert "実行してよいですか" in card["text"]
        url = hooks.new_url(kind="actions")
        await click(tomo, card, approve=True, user="U2", response_url=url)
        await click(tomo, card, approve=False, user="U2", response_url=url)
        await wait_for(lambda: len(hooks.posts()) == 2, what="the answers to bob")
        assert await approval_state(tomo, approval_id_of(card)) == "pending"
    assert {p["text"] for p in hooks.posts()} == {
        "これを承認できるのは、依頼した <@U1> さんだけです。"
    }
    assert tracker.calls() == [] and card_updates(slack, card) == []


async def test_deny_declines_the_call_and_the_model_is_told(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    script(model, "OK, I won't file it.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        await click(tomo, card, approve=False, response_url=hooks.new_url(kind="actions"))
        await wait_state(tomo, approval_id_of(card), "done")
        await wait_for(lambda: card_updates(slack, card), what="the card rewritten")
    assert tracker.calls() == []
    (result,) = tool_results(model.requests[2])
    assert "declined the call" in result and "not made" in result
    assert slack.posts()[-1]["text"] == "OK, I won't file it."
    assert "Denied by <@U1>" in card_updates(slack, card)[-1]["text"]


async def test_a_model_failing_after_the_decision_apologises_in_the_askers_language(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    script(model)
    async with start_tomo(**settings(tracker.url), LLM_MAX_RETRIES=0) as tomo:
        card = await asked(tomo, slack, "ログインの件、issue を作って")
        model.fail(status=500, times=5)  # the reply that goes on after the decision
        await click(tomo, card, approve=False, response_url=hooks.new_url(kind="actions"))
        await wait_state(tomo, approval_id_of(card), "done")
    assert tracker.calls() == []
    assert slack.posts()[-1]["text"] == apology("ja")


async def test_no_decision_in_time_declines_it(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mcp_approvals, "APPROVAL_SECONDS", 1.0)
    script(model, "It was not filed.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        approval = approval_id_of(card)
        await wait_state(tomo, approval, "done")
        url = hooks.new_url(kind="actions")
        await click(tomo, card, approve=True, response_url=url)  # too late
        await wait_for(lambda: hooks.posts(), what="the late click's answer")
    assert tracker.calls() == []
    (result,) = tool_results(model.requests[2])
    assert "did not decide" in result
    assert slack.posts()[-1]["text"] == "It was not filed."
    assert "No decision within 1 min" in card_updates(slack, card)[-1]["text"]
    assert "already been decided" in hooks.posts()[0]["text"]


async def test_clicks_at_once_and_the_job_run_twice_make_the_call_once(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    """Two instances' worth of races on one database: both clicks and both runs of the job
    try at once; one decision and one call win."""
    script(model, "Filed.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        approval = approval_id_of(card)
        url = hooks.new_url(kind="actions")
        await asyncio.gather(
            click(tomo, card, approve=True, response_url=url),
            click(tomo, card, approve=False, response_url=url),
            click(tomo, card, approve=True, response_url=url),
        )
        services = tomo.runtime.services
        assert services is not None and services.approval is not None
        await asyncio.gather(*(services.approval.run(approval_id=approval) for _ in range(3)))
        await wait_state(tomo, approval, "done")
        decision = (await tomo.rows("SELECT decision FROM mcp_approval"))[0]["decision"]
    assert len(hooks.posts()) == 2  # the two clicks that lost were told so
    assert len(tracker.calls()) == (1 if decision == "approved" else 0)
    assert len([p for p in slack.posts() if p["text"] == "Filed."]) == 1


async def test_a_reply_tomo_makes_on_its_own_cannot_ask(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp
) -> None:
    """No one asked for a judgment's reply: no one could approve, so nothing is asked."""
    from tests.conftest import judgment_json, next_ts

    model.enqueue(
        judgment_json(True, delay=0),
        asks_for(tool_call("tracker__create_issue", ARGUMENTS)),
        "Someone should file it.",
    )
    overrides = settings(tracker.url) | {"MIN_WAIT_SECONDS": 0.3}
    async with start_tomo(**overrides) as tomo:
        await looked_at(tomo)
        ts = next_ts()
        slack.add_message("C1", ts=ts, text="login is broken again", user="U1")
        await tomo.message("login is broken again", ts=ts)
        await wait_for(lambda: len(model.requests) >= 3, what="the reply's last round")
    (result,) = tool_results(model.requests[2])
    assert "no one asked for this reply" in result
    assert tracker.calls() == []
    assert not any(c for c in slack.posts() if "may I call" in c["text"])


async def test_a_restart_keeps_the_wait_and_the_click_after_it_makes_the_call_once(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
) -> None:
    script(model, "Filed after the restart.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
    async with start_tomo(**settings(tracker.url)) as tomo:
        (timer,) = await tomo.timers("approval")  # restored from the database
        assert timer.id == f"approval:C1:{timer.thread_ts}"
        await looked_at(tomo)
        await click(tomo, card, approve=True, response_url=hooks.new_url(kind="actions"))
        await wait_state(tomo, approval_id_of(card), "done")
    assert len(tracker.calls("create_issue")) == 1
    assert slack.posts()[-1]["text"] == "Filed after the restart."


async def left_calling(tomo: Tomo, approval: int, *, at: float) -> None:
    """The state a kill -9 leaves while the call is on its way: `calling`, its process gone."""
    async with tomo.runtime.engine.begin() as connection:
        await connection.execute(
            text(
                "UPDATE mcp_approval SET state = 'calling', decision = 'approved', "
                "decided_by = 'U1', called_at = :at WHERE id = :id"
            ),
            {"at": at, "id": approval},
        )


async def test_a_call_cut_short_by_a_stop_is_never_made_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp
) -> None:
    """The one instance starts again: the call its last life was making is cut short at once
    (not after STALE_CALL_SECONDS); the model is told it may have been made, the card says so,
    and it is not made again."""
    script(model, "It may or may not be filed; please check.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        approval = approval_id_of(card)
        await left_calling(tomo, approval, at=time.time())
    async with start_tomo(**settings(tracker.url)) as tomo:
        await wait_state(tomo, approval, "done")
    assert tracker.calls() == []
    (result,) = tool_results(model.requests[2])
    assert "may or may not have been done" in result
    assert slack.posts()[-1]["text"] == "It may or may not be filed; please check."
    assert "it may or may not have been made" in card_updates(slack, card)[-1]["text"]


async def test_a_call_left_calling_too_long_is_taken_as_cut_short(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found `calling` by a job for longer than STALE_CALL_SECONDS (lowered), without a
    restart: its process is gone all the same."""
    from app.conversation.approval import job as approval_job

    monkeypatch.setattr(approval_job, "STALE_CALL_SECONDS", 0.5)
    script(model, "It may or may not be filed; please check.")
    async with start_tomo(**settings(tracker.url)) as tomo:
        card = await asked(tomo, slack)
        approval = approval_id_of(card)
        await left_calling(tomo, approval, at=time.time() - 1)
        services = tomo.runtime.services
        assert services is not None and services.approval is not None
        assert await services.approval.run(approval_id=approval) is None
        await wait_state(tomo, approval, "done")
    assert tracker.calls() == []
    (result,) = tool_results(model.requests[2])
    assert "may or may not have been done" in result
