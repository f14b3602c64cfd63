"""How the model stand-in streams an answer: OpenAI's server-sent events, at a set pace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.model_tools import call_deltas


@dataclass
class Pace:
    """How a streamed answer is written: its first piece after `first` seconds, then one
    every `every` seconds, each `size` characters."""

    first: float = 0.0
    every: float = 0.0
    size: int = 8

    def cut(self, content: str) -> list[str]:
        return [content[i : i + self.size] for i in range(0, len(content), self.size)]


async def events(
    body: dict[str, Any],
    completion: dict[str, Any],
    answer: str | dict[str, Any],
    *,
    pace: Pace,
    started: Callable[[], None],
    ended: Callable[[], None],
) -> AsyncIterator[str]:
    """The completion as OpenAI streams it (platform.openai.com/docs/api-reference/chat-
    streaming): server-sent events of `chat.completion.chunk` objects, the first with the
    role, then the content in pieces, then one with `finish_reason`, a last one with the
    usage when `stream_options.include_usage` asks for it, then `data: [DONE]`. The pieces
    come at `pace` (`started` is called at the first, `ended` after the last); an answer's
    `chunks` fixes where the content is cut, its `fail_after` sends an error event (as OpenAI
    does mid-stream) after that many pieces. Tool calls follow the content as OpenAI streams
    them (tests/fakes/model_tools.py), their arguments cut at the pace's size."""
    choice = completion["choices"][0]
    content = str(choice["message"].get("content") or "")
    fixed = answer.get("chunks") if isinstance(answer, dict) else None
    pieces = [str(p) for p in fixed] if fixed else pace.cut(content)
    fail_after = answer.get("fail_after") if isinstance(answer, dict) else None
    head = {k: completion[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    for number, piece in enumerate(pieces):
        if number == fail_after:
            error = {"message": "fake model failure mid-stream", "type": "server_error"}
            yield f"data: {json.dumps({'error': error})}\n\n"
            return
        await asyncio.sleep(pace.first if number == 0 else pace.every)
        if number == 0:
            started()
        yield event({"content": piece})
    for delta in call_deltas(choice["message"].get("tool_calls") or [], size=pace.size):
        await asyncio.sleep(pace.every)
        yield event(delta)
    ended()
    yield event({}, str(choice.get("finish_reason") or "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        yield f"data: {json.dumps(head | {'choices': [], 'usage': completion['usage']})}\n\n"
    yield "data: [DONE]\n\n"
