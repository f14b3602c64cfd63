"""/admin/*: the operator's view, behind `Authorization: Bearer $ADMIN_TOKEN` (or HTTP Basic
with the token as password, for a browser).

A browser sends Basic credentials with every request to the host, whichever site made it: a
request that changes something and carries them must come from one of tomo's own pages (its
Origin names this host; none, or `null`, is refused). A bearer token is an API client's
(curl), which no browser adds on its own, so it needs no such check."""

from __future__ import annotations

import base64
import hmac
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request

from app.wiring.runtime import Runtime

# response_model=None on each route: the bodies are plain dicts, and a response model per
# route would cost start-up its pydantic schema (and FastAPI's import of pydantic.v1).
router = APIRouter(prefix="/admin")


def _given_token(request: Request) -> str | None:
    """The token of `Authorization: Bearer TOKEN`, or the password of HTTP Basic."""
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        return credentials.strip()
    if scheme.lower() == "basic":
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True).decode()
        except (ValueError, UnicodeDecodeError):
            return None
        return decoded.partition(":")[2]
    return None


def same_origin(request: Request) -> bool:
    """Whether a browser sent this request from a page of this host."""
    origin = request.headers.get("origin", "")
    if origin in ("", "null"):
        return False
    parts = urlsplit(origin)
    host = request.headers.get("host", "")
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower() != ""


def refuse_cross_site(request: Request) -> None:
    """403 for a change asked with a browser's credentials from anywhere but tomo's pages."""
    scheme = request.headers.get("authorization", "").partition(" ")[0].lower()
    if scheme != "bearer" and not same_origin(request):
        raise HTTPException(status_code=403, detail="cross-site request refused")


def _authorized(request: Request, *, challenge: str) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    token = runtime.settings.admin_token
    if token is None:
        raise HTTPException(status_code=404)
    given = _given_token(request)
    if given is None or not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(
            status_code=401, detail="invalid admin token", headers={"WWW-Authenticate": challenge}
        )
    return runtime


def admin_runtime(request: Request) -> Runtime:
    return _authorized(request, challenge="Bearer")


def admin_page_runtime(request: Request) -> Runtime:
    """The same check for pages a browser opens: its 401 makes the browser ask for it."""
    return _authorized(request, challenge='Basic realm="tomo admin", charset="UTF-8"')


AdminRuntime = Annotated[Runtime, Depends(admin_runtime)]
AdminPageRuntime = Annotated[Runtime, Depends(admin_page_runtime)]


@router.get("/jobs", response_model=None)
async def list_jobs(runtime: AdminRuntime) -> dict[str, Any]:
    return {
        "jobs": [
            {
                "id": timer.id,
                "kind": timer.kind,
                "channel": timer.channel,
                "thread_ts": timer.thread_ts,
                "run_at": timer.run_at.isoformat().replace("+00:00", "Z") if timer.run_at else None,
                "seconds_left": round(timer.seconds_left, 3)
                if timer.seconds_left is not None
                else None,
            }
            for timer in await runtime.timers.list()
        ]
    }


@router.delete("/jobs/{job_id:path}", response_model=None)
async def cancel_job(job_id: str, request: Request, runtime: AdminRuntime) -> dict[str, Any]:
    refuse_cross_site(request)
    if runtime.timers.is_periodic(job_id):
        raise HTTPException(status_code=409, detail=f"{job_id} is periodic: it cannot be cancelled")
    if not await runtime.timers.remove(job_id):
        raise HTTPException(status_code=404, detail=f"no job {job_id}")
    return {"cancelled": job_id}
