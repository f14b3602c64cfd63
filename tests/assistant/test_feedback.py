"""Feedback on tomo's replies (docs/how-tomo-works.md#feedback): every reply ends with Slack's
feedback buttons, a click on them reaches POST /slack/interactions, is stored with the reply it
was given to (the same person's second click replacing the first) and shows on
GET /admin/feedback and the admin page."""

from __future__ import annotations

import time
from typing import Any

from app.slack.interactive.feedback_blocks import claim_of_block
from tests.assistant.helpers import answer_by_purpose, feedback_rows, settled, with_blocks
from tests.conftest import ADMIN_TOKEN, StartTomo, Tomo, judgment_json, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.interactions import feedback_payload, form, interact, signed

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def feedback_block_of(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    (block,) = [b for b in blocks if b["type"] == "context_actions"]
    return block


async def mention(
    tomo: Tomo, slack: FakeSlack, text: str = "<@UBOT> how are you?"
) -> dict[str, Any]:
    await tomo.message(text, kind="app_mention")
    await slack.wait_for_posts(1)
    await settled(tomo)
    (post,) = with_blocks(slack, slack.posts())
    return post


async def test_a_reply_ends_with_the_buttons_and_reads_as_its_text(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, reply="**Fine**, thanks!")
    async with start_tomo() as tomo:
        post = await mention(tomo, slack)
        (claim,) = await tomo.rows("SELECT id FROM reply")
    section, buttons = post["blocks"]
    assert post["text"] == "*Fine*, thanks!"  # the notification's text, as before
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "*Fine*, thanks!"}}
    assert buttons["type"] == "context_actions"
    (element,) = buttons["elements"]
    assert element["type"] == "feedback_buttons" and element["action_id"] == "tomo_feedback"
    assert element["positive_button"]["value"] == "positive"
    assert element["negative_button"]["value"] == "negative"
    assert claim_of_block(buttons["block_id"]) == claim["id"]


async def test_only_the_last_message_of_a_long_reply_has_the_buttons(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(
        model, reply="\n\n".join(f"paragraph {n} " + "word " * 150 for n in range(12))
    )
    async with start_tomo() as tomo:
        await tomo.message("<@UBOT> tell me everything", kind="app_mention")
        await settled(tomo)
    posts = with_blocks(slack, slack.posts())
    assert len(posts) >= 2
    assert all("blocks" not in p for p in posts[:-1])
    sections = [b for b in posts[-1]["blocks"] if b["type"] == "section"]
    assert "\n".join(s["text"]["text"] for s in sections).split() == posts[-1]["text"].split()
    assert all(len(s["text"]["text"]) <= 3000 for s in sections)
    feedback_block_of(posts[-1]["blocks"])


async def test_a_click_is_stored_once_per_person_and_shown_with_the_reply_reason(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model)
    async with start_tomo() as tomo:
        post = await mention(tomo, slack)
        block_id = feedback_block_of(post["blocks"])["block_id"]

        async def on_it_cleared() -> bool:  # the reply job's last call to Slack
            return not await tomo.rows("SELECT 1 FROM on_it")

        await wait_for(on_it_cleared, what="the 'on it' sign cleared")
        calls_before = len(slack.calls)

        async def click(value: str, user: str = "U1") -> None:
            payload = feedback_payload(
                channel="C1", message_ts=post["ts"], value=value, user=user, block_id=block_id
            )
            started = time.monotonic()
            response = await interact(tomo, payload)
            assert response.status_code == 200 and response.content == b""
            assert time.monotonic() - started < 3  # Slack's limit for an acknowledgement

        await click("positive")
        first = await feedback_rows(tomo)
        await click("negative")  # Alice changes her mind: the toggle, not a second row
        await click("positive", user="U2")
        rows = await feedback_rows(tomo)
        during = slack.calls[calls_before:]
        listed = (await tomo.client.get("/admin/feedback", headers=BEARER)).json()
        unauthorized = await tomo.client.get("/admin/feedback")
    assert [(r["user_id"], r["value"]) for r in first] == [("U1", "positive")]
    assert sorted((r["user_id"], r["value"]) for r in rows) == [
        ("U1", "negative"),
        ("U2", "positive"),
    ]
    assert during == []  # nothing asked of Slack on the way
    assert unauthorized.status_code == 401
    items = listed["feedback"]
    for item in items:
        assert {"channel", "reply_ts", "reason", "user", "value", "at"} <= set(item)
        assert item["channel"] == "C1" and item["reply_ts"] == post["ts"]
        assert item["reason"] == "mention" and item["at"].endswith("Z")
        assert item["decision"] is None  # a mention has no decision behind it
    assert sorted((i["user"], i["value"]) for i in items) == [
        ("U1", "negative"),
        ("U2", "positive"),
    ]


async def test_forged_stale_or_tampered_clicks_get_401_and_nothing_is_stored(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    payload = feedback_payload(channel="C1", message_ts="1700000000.000100", value="positive")
    body = form(payload)
    async with start_tomo() as tomo:
        forged = await tomo.client.post(
            "/slack/interactions",
            content=body,
            headers={**signed(body), "X-Slack-Signature": "v0=" + "0" * 64},
        )
        stale = await interact(tomo, payload, timestamp=int(time.time()) - 600)
        tampered_headers = signed(body)
        tampered = await tomo.client.post(
            "/slack/interactions",
            content=body.replace(b"positive", b"negative"),
            headers=tampered_headers,
        )
        unsigned = await tomo.client.post("/slack/interactions", content=body)
        too_big = await tomo.client.post(
            "/slack/interactions", content=b"payload=" + b"x" * (1024 * 1024), headers=signed(b"")
        )
        rows = await feedback_rows(tomo)
    assert [r.status_code for r in (forged, stale, tampered, unsigned)] == [401] * 4
    assert too_big.status_code == 413
    assert rows == []


async def test_other_interactions_and_odd_payloads_are_acknowledged_and_store_nothing(
    start_tomo: StartTomo,
) -> None:
    good = feedback_payload(channel="C1", message_ts="1700000000.000100", value="positive")
    odd: list[object] = [
        {"type": "view_submission", "view": {}},
        {**good, "actions": [{**good["actions"][0], "value": "maybe"}]},
        {**good, "actions": [{**good["actions"][0], "type": "button"}]},
        {**good, "user": "U1"},
        {**good, "container": None, "channel": None},
        {**good, "actions": "all of them"},
    ]
    async with start_tomo() as tomo:
        answers = [await interact(tomo, payload) for payload in odd]
        not_json = form("x")[:-3] + b"%7B"  # payload=... broken JSON
        broken = await tomo.client.post(
            "/slack/interactions", content=not_json, headers=signed(not_json)
        )
        rows = await feedback_rows(tomo)
    assert [a.status_code for a in answers] == [200] * len(odd)
    assert broken.status_code == 400
    assert rows == []


async def test_joining_on_its_own_is_measured_with_the_decision_behind_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answer_by_purpose(model, judgment=judgment_json(True, reason="they asked the room"))
    async with start_tomo() as tomo:
        await tomo.message("does anyone know how to rotate the keys?")
        await slack.wait_for_posts(1)
        await settled(tomo)
        (post,) = with_blocks(slack, slack.posts())
        block_id = feedback_block_of(post["blocks"])["block_id"]
        for user, value in (("U1", "positive"), ("U2", "negative"), ("U3", "positive")):
            payload = feedback_payload(
                channel="C1", message_ts=post["ts"], value=value, user=user, block_id=block_id
            )
            assert (await interact(tomo, payload)).status_code == 200
        listed = (await tomo.client.get("/admin/feedback?days=7", headers=BEARER)).json()
        page = await tomo.client.get("/admin?days=7", headers=BEARER)
    items = listed["feedback"]
    assert {i["reason"] for i in items} == {"judgment"}
    assert all(i["decision"]["reason"] == "they asked the room" for i in items)
    assert all(i["decision"]["should_respond"] is True for i in items)
    assert page.status_code == 200
    html = page.text
    assert "joined on its own" in html and "2 👍" in html and "1 👎" in html and "67%" in html
