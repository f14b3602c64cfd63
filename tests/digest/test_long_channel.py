"""A busy day (docs/how-tomo-works.md#digests): 2,000 messages in 100 threads do not fit one
prompt; each part of them gets notes with the messages' own numbers, every prompt stays within
the budget, every message is read once, and the digest written from the notes links the numbers
it cites to the right messages."""

from __future__ import annotations

import re
import time
from typing import Any

from app.digest.writer import PROMPT_TOKENS, estimate_tokens
from app.slack.events import IncomingMessage, history_message
from tests.conftest import StartTomo, Tomo
from tests.digest.helpers import is_digest, is_notes, link, numbers_in, system_text
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command

THREADS, PER_THREAD = 100, 20
WORDS = "the release checklist needs a second reviewer before Friday, and the staging database "


async def busy_day(tomo: Tomo) -> list[tuple[str, str]]:
    """2,000 messages of the last 20 hours, oldest first: (ts, thread_ts) of each."""
    start = time.time() - 20 * 3600
    said: list[tuple[str, str]] = []
    messages: list[IncomingMessage] = []
    for thread in range(THREADS):
        parent = f"{start + thread * 600:.6f}"
        for n in range(PER_THREAD):
            ts = parent if n == 0 else f"{start + thread * 600 + n * 10:.6f}"
            raw: dict[str, Any] = {
                "type": "message",
                "user": ("U1", "U2")[n % 2],
                "text": f"{WORDS * 3}(thread {thread}, message {n})",
                "ts": ts,
            }
            raw |= {"thread_ts": parent} if n else {}
            message = history_message(raw, channel="C1")
            assert isinstance(message, IncomingMessage)
            messages.append(message)
            said.append((ts, parent if n else ""))
    await tomo.runtime.recorder.store(messages)
    return said


def answer(request: dict[str, Any]) -> str | None:
    prompt = system_text(request)
    if is_notes(request):
        shown = numbers_in(prompt)
        return f"**Release**\n- Open: a second reviewer is needed [{shown[0]}][{shown[-1]}]"
    if is_digest(request):
        cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", prompt)})
        return "**Release**\n- Open: a second reviewer [" + "][".join(map(str, cited)) + "]"
    return None


async def test_two_thousand_messages_are_summed_up_in_parts_keeping_their_numbers(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = answer
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        said = await busy_day(tomo)
        await run_command(tomo, "digest now", response_url=hooks.new_url())
        (post,) = await slack.wait_for_posts(1, timeout=60)
        calls = await tomo.rows("SELECT purpose, prompt_tokens FROM llm_call")
    notes = [r for r in model.requests if is_notes(r)]
    (final,) = [r for r in model.requests if is_digest(r)]
    assert len(notes) >= 2 and len(calls) == len(notes) + 1
    assert {c["purpose"] for c in calls} == {"digest"}
    read = [n for request in notes for n in numbers_in(system_text(request))]
    assert sorted(read) == list(range(1, THREADS * PER_THREAD + 1))  # each message once
    for request in (*notes, final):
        assert estimate_tokens(system_text(request)) <= PROMPT_TOKENS + 1500
    assert numbers_in(system_text(final)) == []  # the digest is written from the notes
    text = str(post["text"])
    assert "; 2000 messages)" in text
    for number in (1, 2000):
        ts, thread_ts = said[number - 1]
        assert f"<{link('C1', ts, thread_ts)}|[{number}]>" in text
