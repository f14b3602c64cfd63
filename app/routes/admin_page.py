"""GET /admin: the operator's page (timers with a cancel button, decisions, the feedback on
tomo's replies over `?days=` (7 by default), memories, LLM spend), behind HTTP Basic with the
admin token as password. Plain HTML; a few lines of script count down.
"""

from __future__ import annotations

import time
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from app.routes.admin import AdminPageRuntime, refuse_cross_site
from app.routes.admin_api import overview
from app.routes.admin_feedback import feedback_given, per_reply, sums
from app.templates import TEMPLATES, jinja

if TYPE_CHECKING:
    from jinja2 import Environment

router = APIRouter(prefix="/admin")

FEEDBACK_DAYS = 7.0

PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    # Not no-referrer: under it a browser sends `Origin: null` with the page's own cancel form,
    # which then could not be told from a cross-site one (app.routes.admin.same_origin).
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}


def _clock(value: str | None) -> str:
    """An ISO time as `MM-DD HH:MM:SS UTC` with how long ago it was (or how soon it will be)."""
    if not value:
        return ""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    age = time.time() - moment.timestamp()
    relative = f"{_duration(age)} ago" if age >= 0 else f"in {_duration(-age)}"
    return f"{moment:%m-%d %H:%M:%S} UTC ({relative})"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} d {seconds % 86400 // 3600} h"


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _days(value: str | None) -> float:
    """The feedback's period (`?days=`): 7 unless a number of days from 1 to 3650 is given."""
    try:
        days = float(value) if value else FEEDBACK_DAYS
    except ValueError:
        return FEEDBACK_DAYS
    return days if 1 <= days <= 3650 else FEEDBACK_DAYS


@cache
def _pages() -> Environment:  # imports Jinja2 at the first page, not at start-up
    env = jinja(TEMPLATES / "admin", autoescape=True)
    env.filters.update(clock=_clock, duration=_duration, cost=_cost, path=quote)
    return env


@router.get("", response_class=HTMLResponse)
async def admin_page(request: Request, runtime: AdminPageRuntime) -> HTMLResponse:
    data = await overview(runtime)
    days = _days(request.query_params.get("days"))
    feedback = await feedback_given(runtime, days=days)
    html = (
        _pages()
        .get_template("index.html")
        .render(
            **data,
            persona=runtime.settings.PERSONA_NAME,
            bot_user_id=runtime.identity.user_id,
            slack=runtime.identity.slack,
            slack_error=runtime.identity.slack_error,
            notice=request.query_params.get("notice"),
            feedback_days=days,
            feedback_sums=sums(feedback),
            feedback_replies=per_reply(feedback),
        )
    )
    return HTMLResponse(html, headers=PAGE_HEADERS)


@router.post("/cancel/{job_id:path}")
async def cancel_from_page(
    job_id: str, request: Request, runtime: AdminPageRuntime
) -> RedirectResponse:
    """The page's cancel button (a form POST, no script needed); back to the page after."""
    refuse_cross_site(request)
    if runtime.timers.is_periodic(job_id):
        notice = f"{job_id} is periodic: it cannot be cancelled"
    elif await runtime.timers.remove(job_id):
        notice = f"cancelled {job_id}"
    else:
        notice = f"{job_id} had already run or been cancelled"
    return RedirectResponse(f"/admin?notice={quote(notice)}", status_code=303)
