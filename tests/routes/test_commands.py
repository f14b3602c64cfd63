"""POST /slack/commands end to end (docs/how-tomo-works.md: #interfaces, #tomo): signed form bodies
in, ephemeral answers out, modes stored, and work after the answer sent to the response_url."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any
from urllib.parse import urlencode

import pytest

from app.db.migrate import PROJECT_ROOT
from app.routes import commands as commands_route
from tests.conftest import ADMIN_TOKEN, StartTomo, Tomo, judgment_json, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import command_form, post_command, run_command, signed

COMMANDS = ("status", "quiet", "mentions-only", "normal", "memory", "forget")


async def modes(tomo: Tomo) -> list[dict[str, Any]]:
    return await tomo.rows("SELECT * FROM channel_control ORDER BY channel")


async def test_help_lists_every_command_and_unknown_words_get_it_too(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo() as tomo:
        url = hooks.new_url()
        bare = await run_command(tomo, "", response_url=url)
        asked = await run_command(tomo, "help", response_url=url)
        unknown = await run_command(tomo, "dance <!channel>", response_url=url)
    assert bare["text"] == asked["text"]
    for word in COMMANDS:
        assert f"/tomo {word}" in bare["text"]
    assert unknown["text"].startswith("I don't know `dance &lt;!channel&gt;`")
    assert "/tomo status" in unknown["text"] and "<!channel>" not in unknown["text"]


async def test_a_bad_signature_gets_401_and_changes_nothing(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo() as tomo:
        body = urlencode(command_form("quiet", response_url=hooks.new_url())).encode()
        wrong = signed(body)
        wrong["X-Slack-Signature"] = "v0=" + "0" * 64
        stale = signed(body, timestamp=int(time.time()) - 600)
        missing = {"Content-Type": "application/x-www-form-urlencoded"}
        tampered = signed(body)
        answers = [
            await post_command(tomo, body, wrong),
            await post_command(tomo, body, stale),
            await post_command(tomo, body, missing),
            await post_command(tomo, body.replace(b"quiet", b"forget"), tampered),
        ]
        stored = await modes(tomo)
    assert [a.status_code for a in answers] == [401, 401, 401, 401]
    assert all(a.json() == {"error": "invalid signature"} for a in answers)
    assert stored == []


@pytest.mark.parametrize(
    ("length", "status"), [(b"\xb2", 200), ("9" * 5000, 413), ("99999999", 413), ("abc", 200)]
)
async def test_an_odd_content_length_is_no_error(
    start_tomo: StartTomo, hooks: FakeResponseUrl, length: str | bytes, status: int
) -> None:
    body = urlencode(command_form("help", response_url=hooks.new_url())).encode()
    async with start_tomo() as tomo:
        headers: dict[str, Any] = signed(body)
        response = await post_command(tomo, body, headers | {"Content-Length": length})
    assert response.status_code == status


async def test_signed_bodies_that_are_not_commands_get_clear_errors(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        no_channel = b"command=%2Ftomo&text=quiet&user_id=U1"
        not_form = b'{"channel_id": "C1", "user_id": "U1", "text": "quiet"}'
        large = b"text=" + b"a" * (70 * 1024)
        answers = [
            await post_command(tomo, body, signed(body)) for body in (no_channel, not_form, large)
        ]
        stored = await modes(tomo)
    assert [a.status_code for a in answers] == [400, 400, 413]
    assert stored == []


async def test_quiet_with_a_duration_is_stored_and_answered_in_the_response(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo() as tomo:
        answer = await run_command(tomo, "quiet 2h", response_url=hooks.new_url(), user="U2")
        (row,) = await modes(tomo)
    assert row["channel"] == "C1" and row["mode"] == "quiet" and row["changed_by"] == "U2"
    assert row["quiet_until"] == pytest.approx(time.time() + 7200, abs=30)
    assert answer["text"].startswith("OK, I'll stay quiet here until <!date^")
    assert f"<!date^{int(row['quiet_until'])}^" in answer["text"]


@pytest.mark.parametrize(
    ("words", "seconds"),
    [("30m", 1800), ("1h30m", 5400), ("3d", 3 * 86400), ("1.5 hours", 5400), ("２時間", 7200)],
)
async def test_quiet_reads_durations(
    start_tomo: StartTomo, hooks: FakeResponseUrl, words: str, seconds: float
) -> None:
    async with start_tomo() as tomo:
        await run_command(tomo, f"quiet {words}", response_url=hooks.new_url())
        (row,) = await modes(tomo)
    assert row["quiet_until"] == pytest.approx(time.time() + seconds, abs=30)


async def test_a_bad_duration_gets_a_clear_message_and_changes_nothing(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo() as tomo:
        url = hooks.new_url()
        answers = [
            await run_command(tomo, f"quiet {words}", response_url=url)
            for words in ("soon", "30", "0m", "400d", "2h please")
        ]
        stored = await modes(tomo)
    assert stored == []
    for answer, words in zip(answers, ("soon", "30", "0m", "400d", "2h please"), strict=True):
        assert answer["text"].startswith(f"I can't read `{words}` as a duration")
        assert "`30m`, `2h`" in answer["text"]


async def test_quiet_without_a_duration_then_mentions_only_then_normal(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo() as tomo:
        url = hooks.new_url()
        quiet = await run_command(tomo, "quiet", response_url=url)
        (first,) = await modes(tomo)
        only = await run_command(tomo, "mentions-only", response_url=url)
        (second,) = await modes(tomo)
        normal = await run_command(tomo, "normal", response_url=url)
        (third,) = await modes(tomo)
    assert "until someone runs `/tomo normal`" in quiet["text"]
    assert (first["mode"], first["quiet_until"]) == ("quiet", None)
    assert "only answer mentions here" in only["text"]
    assert (second["mode"], second["quiet_until"]) == ("mentions_only", None)
    assert normal["text"].startswith("OK, back to normal here")
    assert third["mode"] == "normal"


async def test_status_shows_the_mode_the_timers_the_last_join_and_the_limits(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = lambda request: (
        judgment_json(True, delay=0) if purpose_of(request) == "judgment" else "hi!"
    )
    limits = {"AUTONOMOUS_COOLDOWN_SECONDS": 600, "MAX_AUTONOMOUS_REPLIES_PER_DAY": 5}
    # No follow-ups: the message after tomo's own waits the normal hour (a follow-up's timer
    # and the conversations tomo takes part in: tests/conversation/timing/test_follow_ups.py).
    limits |= {"FOLLOW_UP_WINDOW_SECONDS": 0}
    async with start_tomo(MIN_WAIT_SECONDS=0.1, **limits) as tomo:
        before = await run_command(tomo, "status", response_url=hooks.new_url())
        await tomo.message("anyone up for lunch?")
        await slack.wait_for_posts(1)
    async with start_tomo(MIN_WAIT_SECONDS=3600, **limits) as tomo:
        await tomo.message("what about ramen?")  # its judgment waits an hour
        await run_command(tomo, "quiet 3h", response_url=hooks.new_url(), user="U2")
        after = await run_command(tomo, "status", response_url=hooks.new_url())
    assert "• Mode: *normal*" in before["text"] and "Pending timers: none" in before["text"]
    assert "on my own: never" in before["text"]
    assert (
        "wait 10 min before the next one, and join at most 5 times in 24 h (0 so far)"
        in (before["text"])
    )
    text = after["text"]
    assert "• Mode: *quiet* until <!date^" in text and "set by <@U2>" in text
    assert re.search(r"• Pending timers: judgment \(the top level\) in (59 min|1 h)", text)
    assert "on my own: <!date^" in text
    assert "(1 so far)" in text and re.search(r"next one \((9 min \d+ s|10 min) left\)", text)
    assert "Mentions and direct messages are always answered." in text


async def test_answers_are_in_japanese_when_the_person_writes_japanese(
    start_tomo: StartTomo, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.default_content = judgment_json(False)
    async with start_tomo() as tomo:
        url = hooks.new_url()
        japanese = await run_command(tomo, "静かに 2時間", response_url=url)
        (row,) = await modes(tomo)
        english = await run_command(tomo, "status", response_url=url, user="U2")
        await tomo.message("こんにちは、今日のランチどうする?", user="U2")
        guessed = await run_command(tomo, "status", response_url=url, user="U2")
        help_ja = await run_command(tomo, "ヘルプ", response_url=url)
    assert japanese["text"].startswith("わかりました。") and row["mode"] == "quiet"
    assert english["text"].startswith("*tomo in this channel*")
    assert guessed["text"].startswith("*このチャンネルでの tomo*")
    assert "• モード: *quiet*" in guessed["text"]
    assert "`/tomo forget`" in help_ja["text"] and "メンション" in help_ja["text"]


async def test_a_slow_command_is_answered_in_time_and_finished_at_the_response_url(
    start_tomo: StartTomo, hooks: FakeResponseUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(commands_route, "ANSWER_SECONDS", 0.0)  # every command is "slow"
    async with start_tomo() as tomo:
        url = hooks.new_url()
        answer = await run_command(tomo, "mentions-only", response_url=url)
        (post,) = await hooks.wait_for_posts(1)
        (row,) = await modes(tomo)
    assert answer["text"] == "Still on it; I'll tell you here when it's done."
    assert post["url"] == url and post["response_type"] == "ephemeral"
    assert post["replace_original"] is False
    assert "only answer mentions here" in post["text"] and row["mode"] == "mentions_only"


async def test_a_response_url_outside_slack_is_never_called(
    start_tomo: StartTomo, hooks: FakeResponseUrl, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(commands_route, "ANSWER_SECONDS", 0.0)
    async with start_tomo() as tomo:
        url = hooks.new_url().replace("127.0.0.1", "localhost")
        await run_command(tomo, "normal", response_url=url)
        await asyncio.sleep(0.5)
        (row,) = await modes(tomo)
    assert hooks.posts() == [] and row["mode"] == "normal"


async def test_the_mode_shows_in_the_admin_overview_and_page(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    async with start_tomo() as tomo:
        await run_command(tomo, "quiet 1h", response_url=hooks.new_url(), user="U2")
        await run_command(tomo, "mentions-only", response_url=hooks.new_url(), channel="C2")
        overview = (await tomo.client.get("/admin/overview", headers=auth)).json()
        page = (await tomo.client.get("/admin", headers=auth)).text
    by_channel = {m["channel"]: m for m in overview["channel_modes"]}
    assert by_channel["C1"]["mode"] == "quiet" and by_channel["C1"]["changed_by"] == "U2"
    assert by_channel["C1"]["quiet_until"].endswith("Z")
    assert by_channel["C1"]["channel_name"] == "general"
    assert by_channel["C2"]["mode"] == "mentions_only" and by_channel["C2"]["quiet_until"] is None
    assert 'id="channel-modes"' in page
    assert "#general" in page and "quiet" in page and "mentions-only" in page


def test_the_manifest_declares_the_command_and_its_scope() -> None:
    manifest = (PROJECT_ROOT / "slack-manifest.yml").read_text()
    assert "    - command: /tomo\n      url: https://YOUR-HOST/slack/commands\n" in manifest
    assert f"url: https://YOUR-HOST{commands_route.PATH}\n" in manifest
    scopes = manifest.split("    bot:\n", 1)[1].split("settings:", 1)[0]
    assert "      - commands\n" in scopes
