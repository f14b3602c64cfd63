"""What the digest tests share: a channel's day of messages stored as tomo stores them, the
model stand-in answering digest prompts, and the prompts' text."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import create_engine, text

from tests.conftest import Tomo
from tests.tools.workspace import store

WORKSPACE = "https://fake.slack.test/"  # what the Slack stand-in's auth.test answers as `url`


def system_text(request: dict[str, Any]) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def is_digest(request: dict[str, Any]) -> bool:
    return "Write the digest now." in system_text(request)


def is_notes(request: dict[str, Any]) -> bool:
    return "Write the notes now." in system_text(request)


def numbers_in(prompt: str) -> list[int]:
    """The numbers of the messages a digest prompt shows (`[n] Mon 09:00 Alice: …`)."""
    return [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE)]


def link(channel: str, ts: str, thread_ts: str = "") -> str:
    url = f"{WORKSPACE}archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        url += f"?thread_ts={thread_ts}&amp;cid={channel}"
    return url


def digest_answer(answer: str) -> Callable[[dict[str, Any]], str | None]:
    """A responder answering digest prompts with `answer`, and nothing else (None: the
    queue's answers, or the default)."""

    def responder(request: dict[str, Any]) -> str | None:
        return answer if is_digest(request) else None

    return responder


async def a_day(tomo: Tomo) -> dict[str, str]:
    """A day in #general (C1): a thread about lunch, a question at the top level, and what a
    digest leaves out: a bot's message, tomo's own, another channel's, and yesterday's."""
    parent = await store(tomo, "C1", "where shall we have lunch on Friday?", ago=5 * 3600)
    ramen = await store(tomo, "C1", "ramen!", user="U2", thread_ts=parent, ago=4 * 3600)
    agreed = await store(tomo, "C1", "ok, ramen it is", thread_ts=parent, ago=3 * 3600)
    question = await store(tomo, "C1", "who can review the deploy script?", user="U2", ago=3600)
    await bot_message(tomo, "C1", "Deploy #42 finished", ago=1800)
    await bot_message(tomo, "C1", "here is what I found", ago=1700, mine=True)
    await store(tomo, "C2", "random chatter elsewhere", ago=600)
    await store(tomo, "C1", "yesterday's news", ago=30 * 3600)
    return {"parent": parent, "ramen": ramen, "agreed": agreed, "question": question}


async def bot_message(
    tomo: Tomo, channel: str, said: str, *, ago: float, mine: bool = False
) -> str:
    """A bot's message (tomo's own with `mine`) as Slack delivers it."""
    ts = f"{time.time() - ago:.6f}"
    bot = {"user": "UBOT", "bot_id": "BBOT"} if mine else {"bot_id": "B0THER", "user": None}
    await tomo.message(said, channel=channel, ts=ts, subtype="bot_message", **bot)
    return ts


def database_rows(database_url: str, sql: str, **params: Any) -> list[dict[str, Any]]:
    """Rows read with a connection of the test's own (the servers of the process tests)."""
    url = database_url.replace("postgresql://", "postgresql+psycopg://", 1)
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            result = connection.execute(text(sql), params)
            return [dict(row._mapping) for row in result] if result.returns_rows else []
    finally:
        engine.dispose()
