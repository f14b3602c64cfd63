"""Driving the real tools through the signed endpoint: a person's message that Slack delivers,
the model stand-in's scripted tool calls (tests/fakes/model_tools.py), and what the tools
gave back to the model; the rows tomo kept."""

from __future__ import annotations

from collections import deque
from typing import Any

from tests.conftest import Tomo, later_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.model_tools import asks_for, tool_call

SETTINGS: dict[str, Any] = {"LLM_FUNCTION_CALLING": "true", "MIN_WAIT_SECONDS": 60}
URL = "https://fake.slack.test/"


def link(channel: str, ts: str, *, thread_ts: str | None = None) -> str:
    """A message's permalink, as Slack's chat.getPermalink gives it."""
    url = f"{URL}archives/{channel}/p{ts.replace('.', '')}"
    return url + (f"?thread_ts={thread_ts}&cid={channel}" if thread_ts else "")


def script(model: FakeModel, *rounds: list[tuple[str, dict[str, Any]]]) -> None:
    """A reply's model calls these tools, a round at a time, then answers (a memory pass, as
    `/tomo forget` starts one, gets the stand-in's default answer meanwhile)."""
    answers: deque[Any] = deque(asks_for(*(tool_call(n, a) for n, a in c)) for c in rounds)
    answers.append("done")

    def respond(request: dict[str, Any]) -> Any:
        if purpose_of(request) != "reply" or not answers:
            return None
        return answers.popleft()

    model.responder = respond


def tool_results(model: FakeModel, *, after: int = 0) -> list[str]:
    """Every tool result the model was given in the requests from the `after`-th on, in order
    (each round's request repeats the earlier rounds': the longest holds them all)."""
    found = [
        [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]
        for request in model.requests[after:]
        if purpose_of(request) == "reply"
    ]
    return max(found, key=len, default=[])


async def ask(
    tomo: Tomo,
    slack: FakeSlack,
    text: str,
    *,
    channel: str = "C1",
    user: str = "U1",
    replies: int = 1,
    **extra: Any,
) -> str:
    """A person's message to tomo, written now (in Slack too), answered: its ts once the
    `replies`-th reply of the test is finished."""
    ts = later_ts()
    slack.add_message(channel, ts=ts, text=text, user=user)
    await tomo.message(text, channel=channel, ts=ts, user=user, **extra)

    async def finished() -> bool:
        rows = await tomo.rows(
            "SELECT count(*) AS n FROM reply WHERE status IN ('posted', 'failed')"
        )
        return int(rows[0]["n"]) >= replies

    await wait_for(finished, timeout=60, what="the finished reply")
    return ts


async def stored_texts(tomo: Tomo, channel: str) -> list[str]:
    rows = await tomo.rows("SELECT text FROM message WHERE channel = :c ORDER BY ts", c=channel)
    return [r["text"] for r in rows]
