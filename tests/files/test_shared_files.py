"""Files people share, end to end (docs/how-tomo-works.md#files): signed events carrying Slack's
file objects (tests/fixtures/slack, tests/fixtures/slack_web), the files served by the Slack
stand-in's file host, and what the model stand-in received."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.files.images import LONGEST_SIDE
from app.llm import litellm_module
from tests.conftest import (
    ADMIN_TOKEN,
    StartTomo,
    Tomo,
    judgment_json,
    next_ts,
    purpose_of,
    turns_of,
    wait_for,
)
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.fakes.model_api import image_tokens
from tests.fakes.server import ServerThread
from tests.files.samples import file_object, hosted, pdf, picture

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEEING = {"LLM_VISION": "true", "MIN_WAIT_SECONDS": 0.1}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SLOW = WAIT_SECONDS + 15  # a file's download that outlasts every wait of these tests


def answers(model: FakeModel, *, respond: bool = True) -> None:
    model.responder = lambda request: (
        judgment_json(respond, delay=0) if purpose_of(request) == "judgment" else "nice one!"
    )


def requests(model: FakeModel, purpose: str) -> list[dict[str, Any]]:
    return [r for r in model.requests if purpose_of(r) == purpose]


def images_in(content: Any) -> list[Image.Image]:
    if not isinstance(content, list):
        return []
    found: list[Image.Image] = []
    for part in content:
        if part.get("type") == "image_url":
            head, _, data = part["image_url"]["url"].partition(",")
            assert head.startswith("data:image/") and head.endswith(";base64")
            found.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return found


def text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(content)


async def shared(tomo: Tomo, text: str, files: list[dict[str, Any]], **fields: Any) -> str:
    return await tomo.message(text, files=files, subtype="file_share", **fields)


async def test_a_mentioned_screenshot_reaches_the_model_downscaled_the_token_only_to_slack(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    png = hosted(slack, file_object("message_file_share"), picture(3000, 2000), "image/png")
    async with start_tomo(**SEEING) as tomo:
        await shared(tomo, "<@UBOT> what do you think of this?", [png])
        await slack.wait_for_posts(1)
    (reply,) = requests(model, "reply")
    last = turns_of(reply)[-1]
    assert "[file: deploy-error.png]" in text_of(last["content"])
    (image,) = images_in(last["content"])
    assert max(image.size) == LONGEST_SIDE and image.size == (LONGEST_SIDE, 1045)
    assert slack.file_requests == [
        ("T0001-F0001/download/deploy-error.png", "Bearer xoxb-test-token")
    ]


async def test_an_image_in_a_thread_is_read_from_conversations_replies(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    thread = json.loads((FIXTURES / "slack_web" / "conversations_replies_files.json").read_text())
    parent, carrier = thread["messages"]
    parent_ts, carrier_ts = next_ts(), next_ts()
    jpeg = hosted(slack, carrier["files"][0], picture(1920, 1080, kind="JPEG"), "image/jpeg")
    slack.add_message(
        "C1", ts=parent_ts, text=parent["text"], user="U2", thread_ts=parent_ts, reply_count=1
    )
    slack.add_message(
        "C1", ts=carrier_ts, text=carrier["text"], user="U1", thread_ts=parent_ts, files=[jpeg]
    )
    async with start_tomo(**SEEING) as tomo:
        await tomo.message("<@UBOT> isn't she cute?", thread_ts=parent_ts, user="U2")
        await slack.wait_for_posts(1)
    (reply,) = requests(model, "reply")
    turns = turns_of(reply)
    (with_image,) = [t for t in turns if images_in(t["content"])]
    assert "look at this" in text_of(with_image["content"])
    assert "[file: Cat.jpg]" in text_of(with_image["content"])
    assert images_in(with_image["content"])[0].size == (LONGEST_SIDE, 882)


async def test_a_judgment_sees_the_newest_images_at_most_the_limit(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model, respond=False)
    older = hosted(
        slack,
        file_object("message_file_share") | {"id": "F0010", "name": "a.png"},
        picture(400, 300),
        "image/png",
    )
    newer = hosted(
        slack,
        file_object("message_file_share") | {"id": "F0011", "name": "b.png"},
        picture(300, 400),
        "image/png",
    )
    async with start_tomo(MAX_IMAGES_PER_PROMPT=1, **SEEING) as tomo:
        await shared(tomo, "first try", [older])
        await shared(tomo, "look! it works now", [newer])
        await wait_for(lambda: requests(model, "judgment"), what="the judgment")
    (judgment,) = requests(model, "judgment")
    shown = judgment["messages"][-1]
    assert shown["role"] == "user"
    assert "look! it works now" in text_of(shown["content"])
    assert [i.size for i in images_in(shown["content"])] == [(300, 400)]
    assert [path for path, _ in slack.file_requests] == ["T0001-F0011/download/b.png"]


async def test_an_image_is_downloaded_once_for_the_judgment_and_the_reply_it_leads_to(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    photo = hosted(
        slack, file_object("message_file_share"), picture(2000, 1500, kind="JPEG"), "image/jpeg"
    )
    async with start_tomo(**SEEING) as tomo:
        await shared(tomo, "look! my cat found the keyboard", [photo])
        await slack.wait_for_posts(1)
    (judgment,) = requests(model, "judgment")
    (reply,) = requests(model, "reply")
    judged = images_in(judgment["messages"][-1]["content"])
    replied = images_in(turns_of(reply)[-1]["content"])
    assert [i.size for i in judged] == [i.size for i in replied] == [(LONGEST_SIDE, 1176)]
    assert len(slack.file_requests) == 1  # kept from the judgment for the reply


async def test_a_judgment_does_not_pay_again_for_an_image_the_talk_has_moved_past(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A judgment weighs the conversation's ten newest messages: an image posted before them
    is neither shown to it nor downloaded (every judgment would pay for it again)."""
    answers(model, respond=False)
    png = hosted(slack, file_object("message_file_share"), picture(800, 600), "image/png")
    async with start_tomo(LLM_VISION="true", MIN_WAIT_SECONDS=0.5) as tomo:
        await shared(tomo, "our new logo", [png])
        for n in range(10):
            await tomo.message(f"unrelated chat {n}", user="U2")
        await wait_for(lambda: requests(model, "judgment"), what="the judgment")
    (judgment,) = requests(model, "judgment")
    assert [m["role"] for m in judgment["messages"]] == ["system"]
    assert "our new logo\n[file: deploy-error.png]" in text_of(judgment["messages"][0]["content"])
    assert slack.file_requests == []


async def test_what_the_images_cost_counts_in_the_recorded_spend(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """gpt-4o-mini sees images by LiteLLM's map (LLM_VISION=auto); the stand-in bills the image
    as OpenAI does (1568 x 1045 px: six tiles, 1105 tokens), and the call's record, its price
    and /admin/llm-usage include them."""
    answers(model)
    png = hosted(slack, file_object("message_file_share"), picture(3000, 2000), "image/png")
    async with start_tomo(LLM_MODEL="openai/gpt-4o-mini") as tomo:
        await shared(tomo, "<@UBOT> what do you think of this?", [png])
        await slack.wait_for_posts(1)
        (row,) = await tomo.rows("SELECT * FROM llm_call WHERE purpose = 'reply'")
        usage = await tomo.client.get("/admin/llm-usage", headers=ADMIN)
    (reply,) = requests(model, "reply")
    assert [i.size for i in images_in(turns_of(reply)[-1]["content"])] == [(LONGEST_SIDE, 1045)]
    words = sum(len(text_of(m["content"]).split()) for m in reply["messages"])
    assert row["prompt_tokens"] == words + image_tokens(LONGEST_SIDE, 1045) == words + 1105
    prices = (await litellm_module()).model_cost["gpt-4o-mini"]
    assert row["cost_usd"] == pytest.approx(
        row["prompt_tokens"] * prices["input_cost_per_token"]
        + row["completion_tokens"] * prices["output_cost_per_token"]
    )
    (spent,) = [p for p in usage.json()["windows"]["24h"]["purposes"] if p["purpose"] == "reply"]
    assert spent["prompt_tokens"] == row["prompt_tokens"]


async def test_a_pdf_is_read_once_and_shown_in_the_judgment_the_reply_and_the_database(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    plan = pdf(["Day 1: Kyoto, temples and tofu", "Day 2: Nara, deer park"], ["Budget: 80,000"])
    obj = hosted(slack, file_object("message_file_share_pdf"), plan, "application/pdf")
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:  # any model: no vision needed
        ts = await shared(tomo, "Here is the plan for the trip, what do you think?", [obj])
        await slack.wait_for_posts(1)
        (row,) = await tomo.rows("SELECT files FROM message WHERE ts = :ts", ts=ts)
    (judgment,) = requests(model, "judgment")
    assert "Day 2: Nara, deer park" in text_of(judgment["messages"][0]["content"])
    (reply,) = requests(model, "reply")
    last = text_of(turns_of(reply)[-1]["content"])
    assert "[file: trip-plan.pdf]\n```\nDay 1: Kyoto, temples and tofu\n" in last
    assert "Budget: 80,000" in last
    assert len(slack.file_requests) == 1  # read for the judgment, kept for the reply
    (stored,) = json.loads(row["files"])
    assert stored["name"] == "trip-plan.pdf" and "Day 1: Kyoto" in stored["text"]


async def test_a_snippet_and_a_slack_connect_stub_resolved_with_files_info(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    log = b"2026-11-24 10:00:01 ERROR connection refused: db:5432\n"
    info = json.loads((FIXTURES / "slack_web" / "files_info.json").read_text())
    info["file"] = hosted(slack, info["file"], log, "text/plain")
    slack.handle(
        "files.info",
        lambda params: (
            info if params.get("file") == "F0002" else {"ok": False, "error": "file_not_found"}
        ),
    )
    stub = file_object("message_file_share_connect_dm")
    snippet = hosted(
        slack, file_object("message_file_share_snippet"), b"ERROR: exit 1\n", "text/plain"
    )
    async with start_tomo() as tomo:
        slack.add_user("U1", name="alice")
        await shared(tomo, "can you read this log?", [stub], channel="D1", channel_type="im")
        await slack.wait_for_posts(1)
        await shared(tomo, "<@UBOT> and this one?", [snippet])
        await slack.wait_for_posts(2)
    first, second = requests(model, "reply")
    assert text_of(turns_of(first)[-1]["content"]) == (
        "<@U1> (alice): can you read this log?\n[file: server.log]\n```\n"
        "2026-11-24 10:00:01 ERROR connection refused: db:5432\n```"
    )
    assert "[file: deploy.log]\n```\nERROR: exit 1\n```" in text_of(turns_of(second)[-1]["content"])
    assert [p["file"] for p in slack.calls_to("files.info")] == ["F0002"]


async def test_a_slack_connect_picture_is_named_once_files_info_described_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A stub that files.info says is a PNG, for a model that cannot see: its mark takes the
    name (it came as [file: file]), kept with the message, so the next reply names it too
    without asking files.info again; nothing is downloaded."""
    answers(model)
    info = json.loads((FIXTURES / "slack_web" / "files_info.json").read_text())
    info["file"] = hosted(
        slack,
        info["file"] | {"name": "whiteboard.png", "mimetype": "image/png", "filetype": "png"},
        picture(400, 300),
        "image/png",
    )
    slack.handle("files.info", lambda params: info)
    stub = file_object("message_file_share_connect_dm")
    async with start_tomo(LLM_VISION="false") as tomo:
        slack.add_user("U1", name="alice")
        await shared(tomo, "our plan", [stub], channel="D1", channel_type="im")
        await slack.wait_for_posts(1)
        later = f"{time.time() + 0.5:.6f}"  # after tomo's answer, as Slack would stamp it
        await tomo.message("what do you think?", channel="D1", channel_type="im", ts=later)
        await slack.wait_for_posts(2)
    first, second = requests(model, "reply")
    assert turns_of(first)[-1]["content"] == "<@U1> (alice): our plan\n[file: whiteboard.png]"
    assert "<@U1> (alice): our plan\n[file: whiteboard.png]" in [
        t["content"] for t in turns_of(second)
    ]
    assert len(slack.calls_to("files.info")) == 1
    assert slack.file_requests == []


async def test_the_sign_in_page_is_never_taken_for_the_file(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    answers(model)
    slack.sign_in_page_only()
    png = hosted(slack, file_object("message_file_share"), picture(800, 600), "image/png")
    caplog.set_level(logging.INFO)
    async with start_tomo(**SEEING) as tomo:
        await shared(tomo, "<@UBOT> can you see it?", [png])
        await slack.wait_for_posts(1)
    last = turns_of(requests(model, "reply")[0])[-1]
    assert last["content"] == "<@U1> (Alice): <@UBOT> can you see it?\n[file: deploy-error.png]"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("files:read" in w and "reinstall" in w for w in warnings), warnings


async def test_a_stub_files_info_refuses_for_want_of_the_scope_says_so(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    """files.info needs files:read too: its missing_scope (Slack's answer, with `needed`) is
    the same WARNING, and the message is answered with the file named."""
    answers(model)
    slack.handle(
        "files.info",
        lambda params: {
            "ok": False,
            "error": "missing_scope",
            "needed": "files:read",
            "provided": "app_mentions:read,channels:history,chat:write",
        },
    )
    caplog.set_level(logging.INFO)
    async with start_tomo() as tomo:
        stub = file_object("message_file_share_connect_dm")
        await shared(tomo, "can you read this log?", [stub], channel="D1", channel_type="im")
        await slack.wait_for_posts(1)
    last = turns_of(requests(model, "reply")[0])[-1]
    assert last["content"] == "<@U1> (Alice): can you read this log?\n[file: file]"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("files:read" in w and "reinstall" in w for w in warnings), warnings


async def test_a_shared_html_page_is_not_read_nor_taken_for_a_missing_scope(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, caplog: pytest.LogCaptureFixture
) -> None:
    """An HTML file comes back as text/html, like Slack's sign-in page: it is not read, and it
    is no reason to tell the operator to add a scope tomo has."""
    answers(model)
    page = hosted(
        slack,
        file_object("message_file_share_snippet")
        | {"name": "report.html", "mimetype": "text/html", "filetype": "html", "mode": "hosted"},
        b"<html><body><h1>Q3 report</h1></body></html>",
        "text/html",
    )
    caplog.set_level(logging.INFO)
    async with start_tomo() as tomo:
        await shared(tomo, "<@UBOT> what does it say?", [page])
        await slack.wait_for_posts(1)
    last = turns_of(requests(model, "reply")[0])[-1]
    assert last["content"] == "<@U1> (Alice): <@UBOT> what does it say?\n[file: report.html]"
    assert len(slack.file_requests) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_a_file_on_another_host_is_never_fetched_nor_given_the_token(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    asked: list[dict[str, str]] = []

    async def anything(request: Request) -> Response:
        asked.append(dict(request.headers))
        return Response(picture(200, 200), media_type="image/png")

    elsewhere = ServerThread(Starlette(routes=[Route("/{path:path}", anything)]), name="evil")
    elsewhere.start()
    try:
        png = file_object("message_file_share") | {
            "url_private": f"{elsewhere.base_url}/files-pri/T0001-F0001/steal.png",
            "url_private_download": f"{elsewhere.base_url}/files-pri/T0001-F0001/steal.png",
        }
        # And one on Slack's host that redirects there: followed, without the token.
        moved = hosted(
            slack,
            file_object("message_file_share") | {"id": "F0009", "name": "moved.png"},
            b"",
            "image/png",
            location=f"{elsewhere.base_url}/elsewhere/moved.png",
        )
        async with start_tomo(**SEEING) as tomo:
            await shared(tomo, "<@UBOT> look", [png])
            await slack.wait_for_posts(1)
            await shared(tomo, "<@UBOT> and now?", [moved])
            await slack.wait_for_posts(2)
    finally:
        elsewhere.stop()
    assert [headers.get("authorization") for headers in asked] == [None]  # the redirect only
    assert slack.file_requests == [("T0001-F0009/download/moved.png", "Bearer xoxb-test-token")]
    assert not images_in(turns_of(requests(model, "reply")[0])[-1]["content"])
    assert len(images_in(turns_of(requests(model, "reply")[1])[-1]["content"])) == 1


async def test_an_oversized_file_and_an_image_for_a_model_that_cannot_see_are_not_downloaded(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    answers(model)
    big = hosted(slack, file_object("message_file_share_pdf"), pdf(["x"]), "application/pdf")
    big["size"] = 30 * 1024 * 1024  # what Slack says of it: over MAX_FILE_MB
    png = hosted(slack, file_object("message_file_share"), picture(600, 400), "image/png")
    async with start_tomo(LLM_VISION="false", MAX_FILE_MB=20) as tomo:
        await shared(tomo, "<@UBOT> here you go", [big, png])
        await slack.wait_for_posts(1)
    last = turns_of(requests(model, "reply")[0])[-1]["content"]
    assert (
        last == "<@U1> (Alice): <@UBOT> here you go\n[file: trip-plan.pdf] [file: deploy-error.png]"
    )
    assert slack.file_requests == []


async def test_bad_files_never_break_a_reply(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A truncated PNG, a PDF that does not parse, a file gone (404) and downloads too slow:
    the message is answered with their names, within the download's time limit."""
    answers(model)
    whole = picture(800, 600)
    base, doc = file_object("message_file_share"), file_object("message_file_share_pdf")
    broken = hosted(slack, base | {"id": "F0021", "name": "cut.png"}, whole[:4000], "image/png")
    garbled = hosted(
        slack, doc | {"id": "F0022", "name": "bad.pdf"}, b"%PDF-1.4\n1 0 obj <<", "application/pdf"
    )
    gone = hosted(
        slack, doc | {"id": "F0023", "name": "gone.pdf"}, b"", "application/pdf", status=404
    )
    # Slower than any wait of the test's: a reply that waited for them would never come.
    slow = hosted(slack, base | {"id": "F0024", "name": "slow.png"}, whole, "image/png", delay=SLOW)
    late = hosted(
        slack, doc | {"id": "F0025", "name": "late.pdf"}, pdf(["x"]), "application/pdf", delay=SLOW
    )
    # Every Slack call has this timeout, not only the downloads: the default (10 s), which a busy
    # machine's answers stay well within and SLOW outlasts.
    async with start_tomo(SLACK_TIMEOUT_SECONDS=10, **SEEING) as tomo:
        started = time.monotonic()
        await shared(tomo, "<@UBOT> do these open for you?", [broken, garbled, gone, slow, late])
        await slack.wait_for_posts(1)
        took = time.monotonic() - started
        await asyncio.sleep(0.2)
    last = turns_of(requests(model, "reply")[0])[-1]["content"]
    assert last == (
        "<@U1> (Alice): <@UBOT> do these open for you?\n"
        "[file: cut.png] [file: bad.pdf] [file: gone.pdf] [file: slow.png] [file: late.pdf]"
    )
    assert took < SLOW  # the slow downloads were given up (after 10 s), not waited for
    assert len(slack.posts()) == 1


async def test_a_picture_too_costly_to_decode_is_named_and_the_message_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """Two 8000x8000 RGBA PNGs of 258 KB each (decoded: 244 MB apiece, as the issue that took
    the server past 1 GB sent) beside a screenshot: those two are named only, never decoded;
    the screenshot is shown, the message answered once."""
    answers(model)
    bomb = Image.new("RGBA", (8000, 8000), (9, 99, 199, 200))
    out = io.BytesIO()
    bomb.save(out, format="PNG")
    del bomb
    base = file_object("message_file_share")
    huge = [
        hosted(
            slack, base | {"id": f"F003{n}", "name": f"huge{n}.png"}, out.getvalue(), "image/png"
        )
        for n in (1, 2)
    ]
    fine = hosted(slack, base, picture(1200, 800), "image/png")
    async with start_tomo(**SEEING) as tomo:
        await shared(tomo, "<@UBOT> which one is sharper?", [*huge, fine])
        await slack.wait_for_posts(1, timeout=10)
        await asyncio.sleep(0.2)
    last = turns_of(requests(model, "reply")[0])[-1]["content"]
    assert "[file: huge1.png] [file: huge2.png] [file: deploy-error.png]" in text_of(last)
    (image,) = images_in(last)
    assert image.size == (1200, 800)
    assert len(slack.posts()) == 1


async def test_files_in_a_joined_channels_history_are_read_when_it_is_answered(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """conversations.history's messages carry their files as events do: stored on joining,
    read when a mention there is answered (a PDF's text, and a JPEG for a model that sees)."""
    answers(model)
    thread = json.loads((FIXTURES / "slack_web" / "conversations_replies_files.json").read_text())
    carrier = thread["messages"][1]
    jpeg = hosted(slack, carrier["files"][0], picture(1200, 900, kind="JPEG"), "image/jpeg")
    plan = hosted(
        slack,
        file_object("message_file_share_pdf"),
        pdf(["Kickoff on Monday", "Owner: Bob"]),
        "application/pdf",
    )
    slack.add_channel("C9", "project")
    slack.add_message("C9", ts=next_ts(), text="the plan", user="U2", files=[plan])
    slack.add_message("C9", ts=next_ts(), text=carrier["text"], user="U1", files=[jpeg])
    async with start_tomo(**SEEING) as tomo:
        joined = {"type": "member_joined_channel", "user": "UBOT", "channel": "C9", "team": "T0001"}
        assert (await tomo.event(joined)).status_code == 200

        async def fetched() -> bool:
            rows = await tomo.rows("SELECT count(*) AS n FROM message WHERE channel = 'C9'")
            return bool(rows[0]["n"] == 2)

        await wait_for(fetched, what="the joined channel's history")
        await shared(tomo, "<@UBOT> who owns this?", [], channel="C9")
        await slack.wait_for_posts(1)
    (reply,) = requests(model, "reply")
    prompt = json.dumps(reply["messages"])
    assert "Owner: Bob" in prompt and "[file: trip-plan.pdf]" in prompt
    (seen,) = [i for t in reply["messages"] for i in images_in(t["content"])]
    assert seen.size == (1200, 900)


async def test_a_mention_just_after_a_screenshot_shows_the_model_that_screenshot(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A mention ("@tomo what is wrong here?") after the screenshot, not in its thread: the reply
    (in the mention's own thread) gets the screenshot as a lead-in before the turns; one
    posted more than ten minutes before is not shown, nor downloaded."""
    answers(model)
    base = file_object("message_file_share")
    old = hosted(slack, base | {"id": "F0031", "name": "old.png"}, picture(640, 480), "image/png")
    new = hosted(slack, base | {"id": "F0032", "name": "new.png"}, picture(900, 600), "image/png")
    async with start_tomo(LLM_VISION="true", MIN_WAIT_SECONDS=60) as tomo:
        await shared(tomo, "yesterday's", [old], ts=f"{int(time.time()) - 700}.000100")
        await shared(tomo, "the deploy page now", [new])
        await tomo.message("<@UBOT> what is wrong here?")
        await slack.wait_for_posts(1)
    (reply,) = requests(model, "reply")
    lead_in, *_ = [m for m in reply["messages"] if m["role"] == "user"]
    assert "just before this conversation" in text_of(lead_in["content"])
    assert "the deploy page now\n[file: new.png]" in text_of(lead_in["content"])
    assert [i.size for i in images_in(lead_in["content"])] == [(900, 600)]
    assert turns_of(reply)[-1]["content"] == "<@U1> (Alice): <@UBOT> what is wrong here?"
    assert [path for path, _ in slack.file_requests] == ["T0001-F0032/download/new.png"]


async def test_a_reply_downloads_only_the_images_of_the_turns_it_shows(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """THREAD_HISTORY_LIMIT=2: the parent, the two latest replies and the mention are the
    turns; an image in an earlier reply is not shown, so not downloaded."""
    answers(model, respond=False)
    base = file_object("message_file_share")
    early = hosted(slack, base | {"id": "F0041", "name": "a.png"}, picture(300, 200), "image/png")
    late = hosted(slack, base | {"id": "F0042", "name": "b.png"}, picture(200, 300), "image/png")
    async with start_tomo(LLM_VISION="true", THREAD_HISTORY_LIMIT=2, MIN_WAIT_SECONDS=60) as tomo:
        parent = await tomo.message("photo thread", user="U2")
        await shared(tomo, "first", [early], thread_ts=parent)
        await tomo.message("nice", thread_ts=parent, user="U2")
        await shared(tomo, "second", [late], thread_ts=parent)
        await tomo.message("<@UBOT> which one?", thread_ts=parent, user="U2")
        await slack.wait_for_posts(1)
    (reply,) = requests(model, "reply")
    assert [text_of(t["content"]).split(": ", 1)[1] for t in turns_of(reply)] == [
        "photo thread",
        "nice",
        "second\n[file: b.png]",
        "<@UBOT> which one?",
    ]
    assert [i.size for t in turns_of(reply) for i in images_in(t["content"])] == [(200, 300)]
    assert [path for path, _ in slack.file_requests] == ["T0001-F0042/download/b.png"]
