"""Deleted is deleted on the event path too (docs/data-and-privacy.md#what-never-comes-back):
through the signed endpoint, a message whose `message_deleted` Slack delivered before it (the
first delivery was not acknowledged; Slack's retry comes after the deletion) is neither stored
nor answered, and the second copy of a mention (`app_mention` after `message`) that comes
after the message was deleted does not store it again.

Shapes: docs.slack.dev/reference/events/message/message_deleted (`deleted_ts`, `hidden`,
`previous_message`), /reference/events/app_mention, and Slack's retry headers
(`X-Slack-Retry-Num`, `X-Slack-Retry-Reason`: /apis/events-api/#retries)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import StartTomo, Tomo, later_ts, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.gate.endpoint import SETTINGS, ask, stored_texts

TEXTS = [
    pytest.param("<@UBOT> the vault code is 4417", id="English"),
    pytest.param("<@UBOT> 金庫の暗証番号は4417です", id="Japanese"),
]


def deletion(channel: str, ts: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "subtype": "message_deleted",
        "hidden": True,
        "channel": channel,
        "ts": later_ts(),
        "deleted_ts": ts,
        "event_ts": later_ts(),
        "channel_type": "channel",
        "previous_message": {"type": "message", "user": "U1", "text": text, "ts": ts},
    }


def mention(channel: str, ts: str, text: str, *, kind: str) -> dict[str, Any]:
    event = {"type": kind, "user": "U1", "text": text, "ts": ts, "channel": channel}
    event |= {"event_ts": ts}
    return event | ({"channel_type": "channel"} if kind == "message" else {})


async def answered_elsewhere(tomo: Tomo, slack: FakeSlack, model: FakeModel) -> list[str]:
    """Another mention, answered: the thread_ts of every post tomo made by then."""
    model.responder = lambda request: "here"
    await ask(tomo, slack, "<@UBOT> are you there?")
    await wait_for(lambda: slack.posts(), what="a post")
    return [str(p.get("thread_ts") or p.get("ts")) for p in slack.posts()]


@pytest.mark.parametrize("text", TEXTS)
async def test_a_message_delivered_after_its_deletion_is_neither_stored_nor_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, text: str
) -> None:
    ts = later_ts()
    async with start_tomo(**SETTINGS) as tomo:
        # The first delivery of the mention never reached tomo; its deletion did.
        assert (await tomo.event(deletion("C1", ts, text))).status_code == 200
        retried = await tomo.event(mention("C1", ts, text, kind="message"), retry=1)
        assert retried.status_code == 200
        retried = await tomo.event(mention("C1", ts, text, kind="app_mention"), retry=1)
        assert retried.status_code == 200
        threads = await answered_elsewhere(tomo, slack, model)
        kept = await stored_texts(tomo, "C1")
        removal = await tomo.rows("SELECT ts, removed_at FROM removal")
    assert "4417" not in "\n".join(kept), kept
    assert ts not in threads, threads
    assert removal == [{"ts": ts, "removed_at": 0.0}]  # noted, though tomo never had it


@pytest.mark.parametrize("text", TEXTS)
async def test_the_second_copy_of_a_mention_after_its_deletion_does_not_store_it_again(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, text: str
) -> None:
    """The `message` copy stored (it is not addressed to tomo's id yet: no reply), deleted,
    then the `app_mention` copy, an event of its own."""
    ts = later_ts()
    async with start_tomo(**SETTINGS) as tomo:
        plain = text.replace("<@UBOT> ", "")
        assert (await tomo.event(mention("C1", ts, plain, kind="message"))).status_code == 200
        stored = await stored_texts(tomo, "C1")
        assert (await tomo.event(deletion("C1", ts, plain))).status_code == 200
        assert (await tomo.event(mention("C1", ts, text, kind="app_mention"))).status_code == 200
        await answered_elsewhere(tomo, slack, model)
        kept = await stored_texts(tomo, "C1")
    assert stored == [plain]
    assert "4417" not in "\n".join(kept), kept
