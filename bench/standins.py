"""Slack Web API and OpenAI-compatible model stand-ins for the benchmarks, on 127.0.0.1.

Run as its own process (`uvicorn bench.standins:app`) so it does not share a CPU-bound event
loop with the server being measured. Every answer is canned: the benchmarks measure tomo and
Bolt, not these.
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

CHANNELS = 100
_last_post = 0
# When each "on it" sign and each post arrived (bench.onit reads them from GET /calls). A
# streamed reply (STREAM_REPLIES=auto, the default) appears with chat.startStream.
POSTS = frozenset({"chat.postMessage", "chat.startStream"})
RECORDED = frozenset({"assistant.threads.setStatus", "reactions.add", *POSTS})
_calls: list[dict[str, Any]] = []


def _post_ts() -> str:
    """A Slack ts for a new post: the time to the microsecond (the benchmarks read reply
    latency from it), strictly increasing."""
    global _last_post
    _last_post = max(_last_post + 1, int(time.time() * 1_000_000))
    return f"{_last_post // 1_000_000}.{_last_post % 1_000_000:06d}"


def _slack_answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "auth.test":
        return {"ok": True, "user_id": "UBOT", "bot_id": "BBOT", "team_id": "T0001", "user": "tomo"}
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


def _chunks(model: str, content: str, *, usage: bool) -> Iterator[str]:
    """A streamed answer as an OpenAI-compatible server sends it (server-sent events): the
    text in one piece, then the finish, with `usage` (stream_options.include_usage) a chunk
    of no choices carrying the usage, as OpenAI sends it, then [DONE]."""
    head = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    for delta, finish in (({"role": "assistant", "content": content}, None), ({}, "stop")):
        chunk = head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        yield f"data: {json.dumps(chunk)}\n\n"
    if usage:
        counts = {"prompt_tokens": 200, "completion_tokens": 1, "total_tokens": 201}
        yield f"data: {json.dumps(head | {'choices': [], 'usage': counts})}\n\n"
    yield "data: [DONE]\n\n"


async def completion(request: Request) -> Response:
    body = await request.json()
    system = body["messages"][0].get("content") if body.get("messages") else ""
    judgment = '"should_respond"' in str(system)
    if len(_calls) < 100_000:
        kind = "judgment" if judgment else "completion"
        _calls.append({"method": kind, "channel": None, "ts": None, "at": time.time()})
    model, content = body.get("model", "bench-model"), _answer(judgment, str(system))
    if body.get("stream"):
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = _chunks(model, content, usage=usage)
        return StreamingResponse(chunks, media_type="text/event-stream")
    return JSONResponse(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
        }
    )


app = Starlette(
    routes=[
        Route("/api/{method}", slack, methods=["GET", "POST"]),
        Route("/calls", calls, methods=["GET"]),
        Route("/v1/chat/completions", completion, methods=["POST"]),
    ]
)
