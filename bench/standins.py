"""Slack Web API and OpenAI-compatible model stand-ins for the benchmarks, on 127.0.0.1.

Run as its own process (`uvicorn bench.standins:app`) so it does not share a CPU-bound event
loop with the server being measured. Every answer is canned: the benchmarks measure tomo and
Bolt, not these. A reply whose mention says `use tool:NAME ARGUMENT` is answered with a call
to that tool first (bench/standin_tools.py); `GET /search` answers as a SearXNG does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from bench import standin_tools

CHANNELS = 100
# auth.test's `url`, as Slack answers it: the workspace's address, which permalinks start with.
WORKSPACE_URL = "https://bench-workspace.slack.com/"
_last_post = 0
# When each "on it" sign and each post arrived (bench.onit reads them from GET /calls). A
# streamed reply (STREAM_REPLIES=auto, the default) appears with chat.startStream.
POSTS = frozenset({"chat.postMessage", "chat.startStream"})
# A reply is done when it is posted whole or its stream is stopped (bench.busy_day waits so).
FINISHED = frozenset({"chat.postMessage", "chat.stopStream"})
RECORDED = frozenset({"assistant.threads.setStatus", "reactions.add", *POSTS, *FINISHED})
_calls: list[dict[str, Any]] = []


def _post_ts() -> str:
    """A Slack ts for a new post: the time to the microsecond (the benchmarks read reply
    latency from it), strictly increasing."""
    global _last_post
    _last_post = max(_last_post + 1, int(time.time() * 1_000_000))
    return f"{_last_post // 1_000_000}.{_last_post % 1_000_000:06d}"


def _slack_answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "auth.test":
        return {
            "ok": True,
            "url": WORKSPACE_URL,
            "team": "Bench",
            "user": "tomo",
            "team_id": "T0001",
            "user_id": "UBOT",
            "bot_id": "BBOT",
        }
    if method == "users.info":
        user = str(params.get("user") or "U0")
        profile = {"display_name": f"person {user}", "real_name": f"Person {user}"}
        return {"ok": True, "user": {"id": user, "name": user.lower(), "profile": profile}}
    if method == "users.conversations":
        channels = [{"id": f"C{n:04d}", "name": f"channel-{n}"} for n in range(CHANNELS)]
        return {"ok": True, "channels": channels, "response_metadata": {"next_cursor": ""}}
    if method in POSTS:  # chat.startStream answers like a post: the message it writes into
        return {"ok": True, "channel": params.get("channel"), "ts": _post_ts()}
    if method in ("chat.appendStream", "chat.stopStream"):
        return {"ok": True, "channel": params.get("channel"), "ts": params.get("ts")}
    if method in ("conversations.replies", "conversations.history"):
        return {"ok": True, "messages": [], "response_metadata": {"next_cursor": ""}}
    return {"ok": True}


async def slack(request: Request) -> JSONResponse:
    method = request.path_params["method"]
    params: dict[str, Any] = dict(request.query_params)
    if request.method == "POST":
        if request.headers.get("content-type", "").startswith("application/json"):
            params.update(await request.json())
        else:
            params.update(parse_qsl((await request.body()).decode()))
    if method in RECORDED and len(_calls) < 100_000:
        _calls.append(
            {
                "method": method,
                "channel": params.get("channel") or params.get("channel_id"),
                "ts": params.get("thread_ts") or params.get("timestamp"),
                "status": params.get("status"),
                "at": time.time(),
            }
        )
    return JSONResponse(_slack_answer(method, params))


async def calls(request: Request) -> JSONResponse:
    """The recorded calls since the last reading (which forgets them)."""
    taken = list(_calls)
    del _calls[: len(taken)]
    return JSONResponse({"calls": taken})


# A judgment prompt asks for this JSON; the answer is "stay quiet" (no reply follows), but
# for a conversation with a message carrying ANSWER_ME (bench.follow_up): "respond".
QUIET = '{"should_respond": false, "delay_seconds": 0, "reason": "bench"}'
RESPOND = '{"should_respond": true, "delay_seconds": 0, "reason": "bench"}'
ANSWER_ME = "(bench: answer me)"


def _answer(judgment: bool, system: str) -> str:
    if not judgment:
        return "ok"
    return RESPOND if ANSWER_ME in system else QUIET


def _record(call: dict[str, Any]) -> None:
    if len(_calls) < 100_000:
        _calls.append({"channel": None, "ts": None, "at": time.time()} | call)


def _chunks(
    model: str, content: str, *, usage: bool, calls: list[dict[str, Any]] | None = None
) -> Iterator[str]:
    """A streamed answer as an OpenAI-compatible server sends it (server-sent events): the
    text in one piece (or, for tool calls, an empty text and then the calls' deltas, as
    tests/fakes/model_stream.py sends them), then the finish, with `usage`
    (stream_options.include_usage) a chunk of no choices carrying the usage, as OpenAI sends
    it, then [DONE]."""
    head = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    finish = "tool_calls" if calls else "stop"
    deltas = [{"role": "assistant", "content": content}, *standin_tools.call_deltas(calls or [])]
    for n, delta in enumerate([*deltas, {}]):
        ended = finish if n == len(deltas) else None
        chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": ended}]}
        yield f"data: {json.dumps(chunk)}\n\n"
    if usage:
        counts = {"prompt_tokens": 200, "completion_tokens": 1, "total_tokens": 201}
        yield f"data: {json.dumps(head | {'choices': [], 'usage': counts})}\n\n"
    yield "data: [DONE]\n\n"


async def completion(request: Request) -> Response:
    body = await request.json()
    messages = body.get("messages") or []
    system = messages[0].get("content") if messages else ""
    judgment = '"should_respond"' in str(system)
    _record({"method": "judgment" if judgment else "completion"})
    # What each tool returned, seen as the model sees it: bench.busy_day checks every tool
    # round really happened.
    for name, result in standin_tools.new_results(messages):
        ok = not result.startswith("error:")
        _record({"method": "tool_result", "tool": name, "ok": ok, "text": result[:4000]})
    call = None if judgment else standin_tools.asked_call(body)
    if call is not None:
        _record({"method": "tool_call", "tool": call["function"]["name"]})
    model = body.get("model", "bench-model")
    content = "" if call else _answer(judgment, str(system))
    calls = [call] if call else []
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = _chunks(model, content, usage=usage, calls=calls)
        return StreamingResponse(chunks, media_type="text/event-stream")
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    return JSONResponse(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        }
    )


async def search(request: Request) -> Response:
    """A self-hosted SearXNG's search API, for web_search (WEB_SEARCH_PROVIDER=searxng)."""
    _record({"method": "web_search", "query": request.query_params.get("q")})
    return await standin_tools.searxng(request)


app = Starlette(
    routes=[
        Route("/api/{method}", slack, methods=["GET", "POST"]),
        Route("/calls", calls, methods=["GET"]),
        Route("/v1/chat/completions", completion, methods=["POST"]),
        Route("/search", search, methods=["GET"]),
    ]
)
