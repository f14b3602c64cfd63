"""POST /slack/interactions: the Interactivity request URL (docs/how-tomo-works.md#feedback).

Verified exactly like events (the same signature check and body limit: 401 on a bad
signature, nothing read or stored), then the form's `payload` JSON is read defensively
(app.slack.interactive.interactions). A feedback button's click is stored with the reply it
was given to and acknowledged at once with an empty 200, well inside Slack's 3 s; no call to
Slack is made on the way. So is a click on an approval card's Approve or Deny
(docs/tools.md#approvals): recorded, its job's timer set, then answered. Every other
interaction is acknowledged and left alone.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from app.db import feedback
from app.db.erasure import workspace_gone
from app.observability.logs import log_context
from app.routes.events import MAX_BODY_BYTES
from app.routes.signed_form import signed_body
from app.slack.guards import shown
from app.slack.interactive.interactions import (
    ApprovalClick,
    approval_clicks,
    feedback_clicks,
    payload_of,
)
from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

router = APIRouter()

PATH = "/slack/interactions"


@router.post(PATH, response_model=None)
async def interaction(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    body = await signed_body(
        request,
        secret=runtime.settings.SLACK_SIGNING_SECRET.get_secret_value(),
        limit=MAX_BODY_BYTES,
        too_large="1 MiB",
        what="an interaction",
    )
    if isinstance(body, Response):
        return body
    payload = payload_of(body)
    if payload is None:
        return JSONResponse({"error": "no payload JSON object in the form"}, status_code=400)
    decisions = approval_clicks(payload)
    if decisions:
        return await _decide(runtime, decisions)
    clicks = feedback_clicks(payload)
    if not clicks:
        logger.info("acknowledged a %s interaction", shown(payload.get("type")))
        return Response(status_code=200)
    async with runtime.engine.connect() as connection:
        gone = await workspace_gone(connection)
    for click in clicks:
        with log_context(channel=click.channel):
            if gone is not None:
                logger.info("feedback not stored: the workspace is gone (%s)", gone)
                continue
            await feedback.record(
                runtime.engine,
                channel=click.channel,
                reply_ts=click.reply_ts,
                user_id=click.user_id,
                value=click.value,
                claim_id=click.claim_id,
            )
            logger.info("%s feedback on %s from %s", click.value, click.reply_ts, click.user_id)
    return Response(status_code=200)


async def _decide(runtime: Runtime, clicks: list[ApprovalClick]) -> Response:
    """Approve or Deny on an approval card (app.conversation.approval.decisions): recorded
    before the acknowledgement, answered (to the clicker alone, or on the card) after it."""
    if runtime.approval_timers is None:
        logger.info("an approval click, with no MCP servers set: ignored")
        return Response(status_code=200)
    from app.conversation.approval.decisions import ApprovalDecisions

    decisions = ApprovalDecisions(
        engine=runtime.engine,
        slack=runtime.slack,
        timers=runtime.approval_timers,
        api_url=runtime.settings.SLACK_API_URL,
    )
    for click in clicks:
        with log_context(channel=click.channel):
            told = await decisions.decide(click)
            runtime.spawn(decisions.after(click, told), "approval-click")
    return Response(status_code=200)
