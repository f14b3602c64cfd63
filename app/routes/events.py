"""POST /slack/events: the Events API request URL. Verify, read the JSON, hand the event to the
conversation's intake (app.conversation.intake), acknowledge.

No network call and no LLM call happens before the answer. This is the hot path: `serve` is a
bare ASGI app (app.main hands it POST /slack/events ahead of FastAPI's middleware and
dependency solving, which would cost more than a third of an acknowledgement). It reads the
few headers it needs straight from the scope and answers 200 without a Response object.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.observability import metrics
from app.slack.guards import shown
from app.slack.verify import verify_slack_signature
from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

PATH = "/slack/events"
MAX_BODY_BYTES = 1024 * 1024
# The only request headers the handler reads.
_HEADERS = frozenset(
    {
        b"content-length",
        b"x-slack-request-timestamp",
        b"x-slack-signature",
        b"x-slack-retry-num",
        b"x-slack-retry-reason",
    }
)


class Disconnected(Exception):
    """The client went away before its body arrived: there is no one to answer."""


def _headers(scope: Scope) -> dict[str, str]:
    return {
        name.decode("latin-1"): value.decode("latin-1")
        for name, value in scope["headers"]
        if name in _HEADERS
    }


async def read_limited(
    receive: Receive, declared: str, limit: int = MAX_BODY_BYTES
) -> bytes | None:
    """The body, or None when it is larger than `limit` (`declared`: its Content-Length)."""
    # ASCII digits only ("²" is a digit to isdigit, not to int), and no int() of thousands.
    if declared.isascii() and declared.isdigit():
        if len(declared) > len(str(limit)) or int(declared) > limit:
            return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise Disconnected
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        if not message.get("more_body", False):
            if not chunks:
                return chunk  # the usual case: the whole body in one message
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


async def _ok(send: Send) -> None:
    # What Response(status_code=200) sends, without building one.
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})


async def _json(scope: Scope, receive: Receive, send: Send, content: Any, status: int) -> None:
    await JSONResponse(content, status_code=status)(scope, receive, send)


async def _refuse(
    scope: Scope, receive: Receive, send: Send, reason: str, error: str, status: int
) -> None:
    metrics.rejected(reason)
    await _json(scope, receive, send, {"error": error}, status)


async def serve(scope: Scope, receive: Receive, send: Send) -> None:
    started = time.perf_counter()
    runtime: Runtime = scope["app"].state.runtime
    headers = _headers(scope)
    try:
        body = await read_limited(receive, headers.get("content-length", ""))
    except Disconnected:
        return
    if body is None:
        return await _refuse(
            scope, receive, send, "too_large", "request body larger than 1 MiB", 413
        )
    if not verify_slack_signature(
        body,
        headers,
        signing_secret=runtime.settings.SLACK_SIGNING_SECRET.get_secret_value(),
    ):
        logger.warning("rejected a request with a missing, stale or invalid signature")
        return await _refuse(scope, receive, send, "signature", "invalid signature", 401)
    try:
        payload = json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        return await _refuse(scope, receive, send, "not_json", "body is not JSON", 400)
    except RecursionError:
        return await _refuse(scope, receive, send, "not_json", "body is nested too deeply", 400)
    if not isinstance(payload, dict):
        return await _refuse(scope, receive, send, "not_json", "body is not a JSON object", 400)

    kind = payload.get("type")
    if kind == "url_verification":
        challenge = payload.get("challenge", "")
        if not isinstance(challenge, str):
            return await _refuse(scope, receive, send, "not_json", "challenge is not a string", 400)
        metrics.acknowledged(payload, time.perf_counter() - started)
        return await _json(scope, receive, send, {"challenge": challenge}, 200)
    if kind != "event_callback":
        logger.warning(
            "acknowledged a %s request: %s",
            shown(kind),
            shown(payload.get("minute_rate_limited", "")),
        )
        metrics.acknowledged(payload, time.perf_counter() - started)
        return await _ok(send)
    retry = headers.get("x-slack-retry-num")
    if await runtime.intake.take(payload, retry=retry, why=headers.get("x-slack-retry-reason")):
        metrics.acknowledged(payload, time.perf_counter() - started)
        return await _ok(send)
    # Nothing was stored: a 500 makes Slack deliver the event again.
    return await _refuse(scope, receive, send, "not_recorded", "could not record the event", 500)


class _Endpoint:
    """`serve` for FastAPI's router, which then answers 405 to other methods on the path."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await serve(scope, receive, send)


route = Route(PATH, _Endpoint(), methods=["POST"])
