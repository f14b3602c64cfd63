"""POST /slack/events: verify, parse, record durably, set timers, acknowledge (SPEC §3.1).

No network call and no LLM call happens before the answer. This is the hot path: `serve`
runs it as a bare ASGI app (app.main hands it POST /slack/events ahead of FastAPI's middleware
and dependency solving, which would cost more than a third of an acknowledgement).
"""

from __future__ import annotations

import json
import logging

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.db.recorder import Change, NewMessage
from app.logs import log_context
from app.runtime import Runtime
from app.services.routing import route_message
from app.slack.events import IncomingMessage, MemberJoined, parse_event
from app.slack.verify import verify_slack_signature

logger = logging.getLogger(__name__)

PATH = "/slack/events"
MAX_BODY_BYTES = 1024 * 1024
OK = Response(status_code=200)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _read_limited(request: Request) -> bytes | None:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


async def slack_events(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    body = await _read_limited(request)
    if body is None:
        return _error(413, "request body larger than 1 MiB")
    if not verify_slack_signature(
        body,
        request.headers,
        signing_secret=runtime.settings.SLACK_SIGNING_SECRET.get_secret_value(),
    ):
        logger.warning("rejected a request with a missing, stale or invalid signature")
        return _error(401, "invalid signature")
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return _error(400, "body is not JSON")
    if not isinstance(payload, dict):
        return _error(400, "body is not a JSON object")

    kind = payload.get("type")
    if kind == "url_verification":
        return JSONResponse({"challenge": payload.get("challenge", "")})
    if kind != "event_callback":
        logger.warning(
            "acknowledged a %s request: %s", kind, payload.get("minute_rate_limited", "")
        )
        return OK
    event_id = payload.get("event_id")
    event_id = str(event_id) if event_id else None
    retry = request.headers.get("x-slack-retry-num")
    with log_context(event_id=event_id):
        if retry:
            logger.info("slack retry %s (%s)", retry, request.headers.get("x-slack-retry-reason"))
        return await _handle_event(runtime, payload, event_id)


async def _handle_event(runtime: Runtime, payload: dict, event_id: str | None) -> Response:
    event = parse_event(payload)
    change: Change = None
    if isinstance(event, IncomingMessage):
        identity = runtime.identity
        route = route_message(
            event,
            bot_user_id=identity.user_id,
            auto_reply_channels=runtime.settings.AUTO_REPLY_CHANNELS,
        )
        change = NewMessage(event, route)
    elif event is not None and not isinstance(event, MemberJoined):
        change = event
    try:
        outcome = await runtime.recorder.record(event_id=event_id, change=change)
    except Exception:
        # Nothing was stored: a 500 makes Slack deliver the event again.
        return _error(500, "could not record the event")
    if outcome.duplicate:
        logger.info("duplicate delivery acknowledged, not processed again")
        return OK
    if isinstance(change, NewMessage) and outcome.applied:
        with log_context(channel=change.message.channel, thread_ts=change.route.conversation_ts):
            runtime.conversations.on_new_message(change.message, change.route)
            runtime.directory.note_people([change.message.user_id])
            logger.info("message %s routed to %s", change.message.ts, change.route.kind.value)
    elif isinstance(event, MemberJoined) and event.user_id == runtime.identity.user_id:
        logger.info("joined %s; fetching its recent history", event.channel)
        runtime.directory.on_bot_joined(event.channel)
    return OK


async def serve(scope: Scope, receive: Receive, send: Send) -> None:
    response = await slack_events(Request(scope, receive))
    await response(scope, receive, send)


route = Route(PATH, slack_events, methods=["POST"])  # the same, through FastAPI's router
