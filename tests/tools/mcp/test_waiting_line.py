"""A reply that asked for a call's approval ends saying it waits, in code, not by the model's
good will (docs/tools.md#approvals): the round that asks is the reply's last round of tools (the
other calls of that round still get their results), and whatever the model then writes, the
reply ends with one fixed line, in the language of the message it answers."""

from __future__ import annotations

import pytest

from tests.conftest import StartTomo
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.processes import BEARER
from tests.tools.mcp.approving import approval_timers, card_of
from tests.tools.mcp.helpers import looked_at, mention, settings, tool_results

pytestmark = pytest.mark.usefixtures("tracker")
CREATE = tool_call("tracker__create_issue", {"title": "Login fails"})
SEARCH = tool_call("tracker__search_issues", {"query": "login"})
LINE = ":hourglass_flowing_sand: Waiting for <@U1>'s decision on the approval card before I go on."
LINE_JA = ":hourglass_flowing_sand: <@U1> さんが承認カードで判断するまで、続きを待っています。"


async def test_the_round_that_asks_is_the_last_and_the_reply_is_the_line_whatever_comes(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp
) -> None:
    # The model asks for the approval and a search in one round, then, told no tool runs
    # any more (tool_choice "none"), asks for another tool anyway and writes nothing.
    model.enqueue(
        asks_for(CREATE, SEARCH), asks_for(tool_call("tracker__get_issue", {"key": "P-1"}))
    )
    async with start_tomo(**settings(tracker.url)) as tomo:
        await looked_at(tomo)
        await mention(tomo, slack, "<@UBOT> file an issue: login fails, and find similar ones")
        card = card_of(slack)
        await approval_timers(tomo)
        jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
    assert len(model.requests) == 2 and model.requests[1]["tool_choice"] == "none"
    waiting, found = tool_results(model.requests[1])
    assert waiting.startswith("The call was not made") and "No issue matches 'login'" in found
    assert [call["tool"] for call in tracker.calls()] == ["search_issues"]
    assert [p["text"] for p in slack.posts()][-2:] == [card["text"], LINE]
    # /admin/jobs lists the approval's timer with the others (APScheduler).
    assert [j["kind"] for j in jobs if j["id"].startswith("approval:C1:")] == ["approval"]


@pytest.mark.parametrize(
    ("asked", "written", "line"),
    [
        ("<@UBOT> file an issue: login fails", "I asked to file it.", LINE),
        ("<@UBOT> ログインできない件で issue を作って", "issue の作成を依頼しました。", LINE_JA),
    ],
    ids=["english", "japanese"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["posted", "streamed"])
async def test_whatever_the_model_writes_the_reply_ends_with_the_line_in_its_language(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    asked: str,
    written: str,
    line: str,
    stream: bool,
) -> None:
    model.enqueue(asks_for(CREATE), written)
    streaming = {"STREAM_REPLIES": "auto", "LLM_TIMEOUT_SECONDS": 30} if stream else {}
    async with start_tomo(**settings(tracker.url), **streaming) as tomo:
        await looked_at(tomo)
        await mention(tomo, slack, asked)
        card_of(slack)
        (stored,) = await tomo.rows("SELECT text FROM message WHERE user_id = 'UBOT'")
    if stream:
        (streamed,) = slack.streams()
        text = streamed["text"]
    else:
        text = slack.posts()[-1]["text"]
    assert text == f"{written}\n\n{line}" == stored["text"]
    assert tracker.calls() == []
