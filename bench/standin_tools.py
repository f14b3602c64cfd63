"""The model stand-in's tool calls (bench/standins.py), and a SearXNG stand-in for web_search.

A reply request whose last user message says `use tool:NAME ARGUMENT` (one such line per
tool, in the order they are to be called) is answered with a call to NAME, its argument
ARGUMENT, as long as the request lists NAME in `tools`, does not forbid calls
(`tool_choice: "none"`, a reply's last round) and does not yet hold that tool's result; once
it does, the stand-in answers with text. ARGUMENT goes to the tool's first required parameter
(else its first one), unwrapped from Slack's link form `<https://…|label>` as a model reads it.

The wire format is OpenAI's function calling as the tests' stand-ins send it
(tests/fakes/model_tools.py, which notes its sources: OpenAI's API reference for the chat
completion object and chunk object, LiteLLM 1.110's ChatCompletionDeltaToolCall and
stream_chunk_builder). Whole: the assistant message has `content: null` and `tool_calls`, each
`{"id": "call_…", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`, the
choice's `finish_reason` is `"tool_calls"`. Streamed: per call, a delta with its index, id,
type and name (arguments ""), then deltas with more of the arguments, by index.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from tests.fakes.searxng import PAGE, result  # the tests' SearXNG results, as it sends them

MARKER = re.compile(r"use tool:([A-Za-z_][A-Za-z0-9_]*)[ \t]*([^\n]*)")
_ids = itertools.count(1)


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts (a turn with images)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _unlinked(argument: str) -> str:
    """`<https://…|label>` or `<https://…>` (Slack's mrkdwn for a link) as the bare URL."""
    found = re.fullmatch(r"<([^<>|]+)(?:\|[^<>]*)?>", argument.strip())
    return found.group(1) if found else argument.strip()


def _offered(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools the request lists: name -> JSON schema of the arguments."""
    offered = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            offered[str(function["name"])] = function.get("parameters") or {}
    return offered


def _called(messages: list[Any]) -> dict[str, str]:
    """The tool calls the assistant turns of the prompt made: call id -> tool name."""
    names = {}
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                names[str(call.get("id"))] = str((call.get("function") or {}).get("name"))
    return names


def answered(messages: list[Any]) -> set[str]:
    """The tools whose results are in the prompt."""
    names = _called(messages)
    return {
        names.get(str(m.get("tool_call_id")), "")
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool"
    }


def new_results(messages: list[Any]) -> list[tuple[str, str]]:
    """(tool name, result) of the tool turns after the last assistant turn: the results this
    request hands back for the first time (an earlier round's are repeated before it)."""
    names = _called(messages)
    fresh: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            fresh = []
        elif message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "")
            fresh.append((name, _text(message.get("content"))))
    return fresh


def asked_call(body: dict[str, Any]) -> dict[str, Any] | None:
    """The tool call this request is answered with, or None (answer with text)."""
    if body.get("tool_choice") == "none":
        return None
    messages = body.get("messages") or []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return None
    offered, done = _offered(body), answered(messages)
    for name, argument in MARKER.findall(_text(users[-1].get("content"))):
        if name not in offered or name in done:
            continue
        schema = offered[name]
        keys = list(schema.get("required") or []) or list(schema.get("properties") or {})
        arguments = {keys[0]: _unlinked(argument)} if keys else {}
        return {
            "id": f"call_bench{next(_ids):05d}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
        }
    return None


def call_deltas(calls: list[dict[str, Any]], *, size: int = 16) -> Iterator[dict[str, Any]]:
    """The deltas that stream `calls` (tests/fakes/model_tools.py's): per call, its id and
    name, then its arguments in pieces of `size` characters."""
    for index, call in enumerate(calls):
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": "function"}
        yield {"tool_calls": [head | {"function": {"name": function["name"], "arguments": ""}}]}
        arguments = str(function["arguments"])
        for start in range(0, len(arguments), size):
            piece = arguments[start : start + size]
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


async def searxng(request: Request) -> JSONResponse:
    """`GET /search?q=…&format=json`, as a self-hosted SearXNG answers it."""
    query = request.query_params.get("q", "")
    return JSONResponse(
        {
            "query": query,
            "number_of_results": 0,
            "results": [result(n, query) for n in range(1, PAGE + 1)],
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [f"{query} changelog"],
            "unresponsive_engines": [],
        }
    )
