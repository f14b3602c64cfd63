"""A call's arguments hold what people wrote, so calls asked for approval go with their channel
(docs/data-and-privacy.md): `/tomo forget` in a channel and the channel deleted in Slack
(`channel_deleted`, `group_deleted`) delete that channel's approvals and their timers; the app
uninstalled (`app_uninstalled`, `tokens_revoked` naming tomo's bot) deletes the workspace's.
A click on a card whose approval is gone makes no call."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conftest import StartTomo, Tomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.model_tools import asks_for, tool_call
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command
from tests.tools.mcp.approving import approval_timers, card_of, click
from tests.tools.mcp.helpers import looked_at, mention, settings

pytestmark = pytest.mark.usefixtures("tracker")
CREATE = tool_call("tracker__create_issue", {"title": "Login fails for アリス"})

# What Slack sends (docs.slack.dev/reference/events/channel_deleted, /group_deleted,
# /app_uninstalled, /tokens_revoked); tests/retention/test_erase.py sends the same.
CHANNEL_GONE = {
    "forget": None,
    "channel_deleted": {"type": "channel_deleted", "channel": "C1"},
    "group_deleted": {"type": "group_deleted", "channel": "C1"},
}
WORKSPACE_GONE = {
    "app_uninstalled": {"type": "app_uninstalled"},
    "tokens_revoked": {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["UBOT"]}},
}


async def asked_in_two_channels(
    tomo: Tomo, slack: FakeSlack, model: FakeModel
) -> list[dict[str, Any]]:
    """An approval waiting in C1 and one in C2: their cards."""
    model.enqueue(asks_for(CREATE), "Asked in C1.", asks_for(CREATE), "Asked in C2.")
    await looked_at(tomo)
    cards = []
    for n, channel in enumerate(("C1", "C2"), 1):
        await mention(tomo, slack, "<@UBOT> file an issue: login", channel=channel, replies=n)
        cards.append(card_of(slack))
    assert {t.channel for t in await approval_timers(tomo, 2)} == {"C1", "C2"}
    return cards


async def erased(tomo: Tomo) -> bool:
    rows = await tomo.rows("SELECT done_at FROM erasure")
    return bool(rows) and all(r["done_at"] is not None for r in rows)


@pytest.mark.parametrize("gone", list(CHANNEL_GONE))
async def test_a_channel_forgotten_or_deleted_loses_its_approvals_and_their_timers(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
    gone: str,
) -> None:
    async with start_tomo(**settings(tracker.url)) as tomo:
        first, _ = await asked_in_two_channels(tomo, slack, model)
        event = CHANNEL_GONE[gone]
        if event is None:
            await run_command(tomo, "forget", response_url=hooks.new_url(), channel="C1")
        else:
            assert (await tomo.event(event)).status_code == 200
            await wait_for(lambda: erased(tomo), timeout=30, what="the erasure")
        left = await tomo.rows("SELECT channel, arguments FROM mcp_approval")
        timers = await tomo.timers("approval")
        if event is None:  # the channel is still there: a click on the old card does nothing
            await click(tomo, first, approve=True, response_url=hooks.new_url(kind="actions"))
    assert [row["channel"] for row in left] == ["C2"]
    assert "アリス" in left[0]["arguments"]
    assert [t.channel for t in timers] == ["C2"]
    assert tracker.calls() == []


@pytest.mark.parametrize("gone", list(WORKSPACE_GONE))
async def test_the_app_uninstalled_loses_every_approval_and_their_timers(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, tracker: FakeMcp, gone: str
) -> None:
    async with start_tomo(**settings(tracker.url)) as tomo:
        await asked_in_two_channels(tomo, slack, model)
        event = WORKSPACE_GONE[gone]
        assert (await tomo.event(event, event_time=int(time.time()))).status_code == 200
        await wait_for(lambda: erased(tomo), timeout=30, what="the erasure")
        left = await tomo.rows("SELECT channel FROM mcp_approval")
        timers = await tomo.timers("approval")
    assert left == [] and timers == []
    assert tracker.calls() == []
