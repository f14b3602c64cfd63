"""The body of a signed form Slack posts (a slash command, an interaction): read within a
size limit, then its signature checked before anything else is read, as for events."""

from __future__ import annotations

import logging

from fastapi import Request
from fastapi.responses import JSONResponse

from app.routes.events import Disconnected, read_limited
from app.slack.verify import verify_slack_signature

logger = logging.getLogger(__name__)


async def signed_body(
    request: Request, *, secret: str, limit: int, too_large: str, what: str
) -> bytes | JSONResponse:
    """The verified body, or the answer to give instead: 400 when the client went away, 413
    past `limit` (`too_large` says it), 401 on a missing, stale or invalid signature."""
    declared = request.headers.get("content-length", "")
    try:
        body = await read_limited(request.receive, declared, limit)
    except Disconnected:
        return JSONResponse({"error": "the client went away"}, status_code=400)
    if body is None:
        return JSONResponse({"error": f"request body larger than {too_large}"}, status_code=413)
    if not verify_slack_signature(body, request.headers, signing_secret=secret):
        logger.warning("rejected %s with a missing, stale or invalid signature", what)
        return JSONResponse({"error": "invalid signature"}, status_code=401)
    return body
