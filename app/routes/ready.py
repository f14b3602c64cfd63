"""GET /readyz: 200 once this instance can compose a reply without waiting (its job worker, or
this process with JOB_WORKER=inline, has imported LiteLLM and slack-sdk), 503 with the reason
until then. The startup probe for Cloud Run and the check for a rolling deploy: an overlapping
deploy keeps the old instance answering meanwhile. No authentication, no database, no network:
it reads what this process already knows."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.wiring.runtime import Runtime

router = APIRouter()


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    runtime: Runtime = request.app.state.runtime
    waiting_for = runtime.jobs.waiting_for
    if waiting_for is None:
        return JSONResponse({"status": "ready"})
    return JSONResponse({"status": "starting", "reason": waiting_for}, status_code=503)
