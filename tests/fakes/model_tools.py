"""The model stand-in's tool calls, in OpenAI's function-calling wire format, as LiteLLM parses
it (litellm 1.110: litellm/types/utils.py's ChatCompletionDeltaToolCall, `index` per piece;
litellm/litellm_core_utils/streaming_chunk_builder_utils.py's get_combined_tool_content,
which joins the pieces by (choice index, tool-call index); LiteLLM's own streaming tests
build their chunks the same way).

Whole (OpenAI API reference, "The chat completion object"): the assistant message has
`content` (null when it only calls tools) and `tool_calls`, each
`{"id": "call_…", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`;
the choice's `finish_reason` is `"tool_calls"`.

Streamed (OpenAI API reference, "The chat completion chunk object"; the function-calling
guide's "Streaming" section): each call's first delta is
`{"tool_calls": [{"index": i, "id": "call_…", "type": "function",
"function": {"name": …, "arguments": ""}}]}`, the arguments then come in further deltas
`{"tool_calls": [{"index": i, "function": {"arguments": "<piece>"}}]}`, and the last chunk's
`finish_reason` is `"tool_calls"`.

A test scripts "first the model calls tool X with Y, then it answers" with
`model.enqueue(asks_for(tool_call("X", Y)), "the answer")`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

_ids = itertools.count(1)


def tool_call(
    name: str, arguments: dict[str, Any] | str, *, id: str | None = None
) -> dict[str, Any]:
    """One call as a whole answer's message has it; `arguments` a dict (sent as JSON text)
    or the very text the model wrote (to send broken JSON)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": id or f"call_fake{next(_ids):04d}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def asks_for(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An answer that calls tools (with `content` written before them, if any)."""
    return {"content": content, "tool_calls": list(calls), "finish_reason": "tool_calls"}


def call_deltas(calls: list[dict[str, Any]], *, size: int) -> Iterator[dict[str, Any]]:
    """The deltas that stream `calls`: per call, its id and name, then its arguments in
    pieces of `size` characters."""
    for index, call in enumerate(calls):
        function = call.get("function") or {}
        head = {"index": index, "id": call.get("id"), "type": "function"}
        yield {"tool_calls": [head | {"function": {"name": function.get("name"), "arguments": ""}}]}
        arguments = str(function.get("arguments") or "")
        for start in range(0, len(arguments), max(1, size)):
            piece = arguments[start : start + size]
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
