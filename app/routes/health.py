"""GET /healthz: the database answers and the scheduler runs (else 503); whether Slack takes
tomo's token (`slack`: ok, unreachable or unauthorized; `status: degraded` while it is not ok,
still a 200: a platform must not restart a service whose token is wrong, in a loop)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from app.jobs.kinds import JobKind
from app.runtime import Runtime
from app.slack.identity import OK

router = APIRouter()


async def _database_ok(runtime: Runtime) -> bool:
    try:
        async with asyncio.timeout(3):
            async with runtime.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
    except Exception:
        return False
    return True


def _worker(runtime: Runtime) -> dict[str, object]:
    """Where jobs run; a worker process being replaced is reported, not unhealthy: the
    acknowledgements, which Slack's deadline is about, go on meanwhile."""
    worker = runtime.worker
    if worker is None:
        return {"mode": "inline"}
    return {
        "mode": "process",
        "state": "running" if worker.alive else "restarting",
        "pid": worker.pid,
        "restarts": worker.restarts,
    }


@router.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    runtime: Runtime = request.app.state.runtime
    database = await _database_ok(runtime)
    scheduler = runtime.timers.running
    healthy = database and scheduler
    slack = runtime.identity.slack
    body = {
        "status": ("ok" if slack == OK else "degraded") if healthy else "unavailable",
        "database": "ok" if database else "unreachable",
        "scheduler": "running" if scheduler else "stopped",
        "backend": runtime.timers.name,
        "slack": slack,
        "bot_user_id": runtime.identity.user_id,
        "pending_jobs": {
            JobKind.JUDGMENT: await runtime.timers.count(JobKind.JUDGMENT),
            JobKind.REPLY: await runtime.timers.count(JobKind.REPLY),
        },
        "job_worker": _worker(runtime),
    }
    return JSONResponse(body, status_code=200 if healthy else 503)
