"""`/tomo digest now` end to end (docs/how-tomo-works.md#digests): a signed command, the digest
of the last 24 hours posted at the channel's top level; the model is given people's messages of
that channel alone, numbered by conversation, and its citations become the messages' permalinks
(a number that names no message is dropped, a link it wrote itself removed); an empty day
costs no model call and posts nothing; the cost is recorded under `digest`."""

from __future__ import annotations

import pytest

from tests.conftest import StartTomo, Tomo, wait_for
from tests.digest.helpers import (
    a_day,
    digest_answer,
    is_digest,
    link,
    numbers_in,
    system_text,
)
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command
from tests.tools.workspace import store

ANSWER = (
    "**Lunch on Friday**\n"
    "- Decided: ramen [2][3]\n"
    "- Asked: who reviews the deploy script, not answered yet [4] [99]\n"
    "- See [the menu](https://evil.example/menu) or https://evil.example/x <!channel> [0]"
)


async def digest_posted(tomo: Tomo, slack: FakeSlack, before: int) -> dict[str, object]:
    posts = await slack.wait_for_posts(before + 1, timeout=30)
    await wait_for(
        lambda: tomo.rows("SELECT 1 FROM digest_run WHERE status = 'posted'"), what="the run"
    )
    return posts[-1]


async def test_now_posts_the_last_day_summed_up_with_links_to_the_messages(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = digest_answer(ANSWER)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        said = await a_day(tomo)
        before = len(slack.posts())
        url = hooks.new_url()
        answer = await run_command(tomo, "digest now", response_url=url)
        post = await digest_posted(tomo, slack, before)
        calls = await tomo.rows("SELECT purpose, prompt_tokens FROM llm_call")
        (run,) = await tomo.rows("SELECT * FROM digest_run")
    assert answer["text"].startswith("OK, I'm writing a digest of the last 24 hours here")
    (request,) = [r for r in model.requests if is_digest(r)]
    prompt = system_text(request)
    # Numbered by conversation: the thread first (it began first), then the top level.
    assert numbers_in(prompt) == [1, 2, 3, 4]
    assert "[1] " in prompt and "Alice: where shall we have lunch on Friday?" in prompt
    assert "Bob: ramen!" in prompt and "Bob: who can review the deploy script?" in prompt
    for left_out in ("Deploy #42", "here is what I found", "random chatter", "yesterday's news"):
        assert left_out not in prompt
    assert prompt.index("A thread, begun") < prompt.index("The channel's top level")
    # Posted once, at the top level; the title, then the model's text with its links.
    assert post["channel"] == "C1" and post["thread_ts"] is None
    text = str(post["text"])
    assert text.startswith("*Digest of #general* (") and "; 4 messages)" in text
    ramen, agreed = (
        link("C1", said["ramen"], said["parent"]),
        link("C1", said["agreed"], said["parent"]),
    )
    assert f"<{ramen}|[2]><{agreed}|[3]>" in text
    assert f"<{link('C1', said['question'])}|[4]>" in text
    assert "[99]" not in text and "[0]" not in text
    assert "evil.example" not in text and "<!channel>" not in text
    assert "the menu" in text  # a link the model wrote keeps its words only
    assert len(slack.posts()) == before + 1
    assert [c["purpose"] for c in calls] == ["digest"]
    assert run["status"] == "posted" and run["messages"] == 4 and run["posted_ts"]


async def test_the_digest_follows_the_channels_instructions_and_japanese(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = digest_answer("**ランチ**\n- 決まったこと: 金曜はラーメン [1][2]")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        url = hooks.new_url()
        await run_command(tomo, "指示 絵文字を使わず、丁寧に書いてください", response_url=url)
        await slack.wait_for_posts(1)
        await store(tomo, "C1", "金曜のランチどこにする?", ago=3600)
        await store(tomo, "C1", "ラーメンがいいな", user="U2", ago=3000)
        answer = await run_command(tomo, "まとめ 今すぐ", response_url=url)
        post = await digest_posted(tomo, slack, 1)
    assert answer["text"].startswith("わかりました。直近 24 時間のまとめを書いています")
    (request,) = [r for r in model.requests if is_digest(r)]
    prompt = system_text(request)
    assert "Write in Japanese" in prompt
    assert "絵文字を使わず、丁寧に書いてください" in prompt
    assert prompt.index("## Standing instructions for #general") < prompt.index("## The messages")
    assert str(post["text"]).startswith("*#general のまとめ* (")
    assert "2 件の発言" in str(post["text"]) and "金曜はラーメン <https://" in str(post["text"])


@pytest.mark.parametrize("words", ["digest now", "まとめ 今すぐ"])
async def test_an_empty_day_posts_nothing_and_asks_the_model_nothing(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl, words: str
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", "last week's news", ago=3 * 86400)
        await store(tomo, "C2", "another channel's", ago=60)
        url = hooks.new_url()
        await run_command(tomo, words, response_url=url)
        (told,) = await hooks.wait_for_posts(1)
        runs = await tomo.rows("SELECT status, messages FROM digest_run")
    assert model.requests == [] and slack.posts() == []
    assert runs == [{"status": "empty", "messages": 0}]
    assert told["text"].startswith("Nobody wrote here" if words.startswith("d") else "直近 24 時間")


async def test_a_model_that_fails_is_told_and_nothing_is_posted(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.fail(status=500, times=5)
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await store(tomo, "C1", "something happened", ago=600)
        url = hooks.new_url()
        await run_command(tomo, "digest now", response_url=url)
        (told,) = await hooks.wait_for_posts(1)
        runs = await tomo.rows("SELECT status FROM digest_run")
        calls = await tomo.rows("SELECT purpose, success FROM llm_call")
    assert told["text"].startswith("Sorry, I could not write the digest")
    assert slack.posts() == [] and runs == [{"status": "failed"}]
    assert calls == [{"purpose": "digest", "success": False}]
