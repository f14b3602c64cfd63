"""GET /healthz: the database answers and the scheduler runs (else 503); whether Slack takes
tomo's token (`slack`: ok, unreachable or unauthorized) and the models have a key (`model_key`:
ok, checking, or what is missing); `status: degraded` while either is not, still a 200: a
platform must not restart a service whose token or key is wrong, in a loop. Where MCP_SERVERS
is set, `mcp` says whether each server answered its last look (ok or unreachable), as the
process that runs replies wrote it in the database within the last three checks."""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

from app.jobs.kinds import JobKind
from app.llm.model_keys import CHECKING
from app.llm.model_keys import OK as KEY_OK
from app.slack.identity import OK
from app.wiring.runtime import Runtime

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


async def _mcp(runtime: Runtime) -> dict[str, str]:
    from app.db.mcp.state import OK, UNREACHABLE, server_states
    from app.tools.mcp.servers import CHECK_SECONDS

    try:
        async with asyncio.timeout(3):
            states = await server_states(runtime.engine)
    except Exception:
        states = {}
    now = time.time()
    return {
        server.name: OK
        if (state := states.get(server.name)) is not None
        and state.state == OK
        and now - state.checked_at < 3 * CHECK_SECONDS
        else UNREACHABLE
        for server in runtime.settings.mcp_servers
    }


@router.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    runtime: Runtime = request.app.state.runtime
    database = await _database_ok(runtime)
    scheduler = runtime.timers.running
    healthy = database and scheduler
    slack = runtime.identity.slack
    model_key = runtime.model_key_state
    working = slack == OK and model_key in (KEY_OK, CHECKING)
    body: dict[str, object] = {
        "status": ("ok" if working else "degraded") if healthy else "unavailable",
        "database": "ok" if database else "unreachable",
        "scheduler": "running" if scheduler else "stopped",
        "backend": runtime.timers.name,
        "slack": slack,
        "bot_user_id": runtime.identity.user_id,
        "model_key": model_key,
        "pending_jobs": {
            JobKind.JUDGMENT: await runtime.timers.count(JobKind.JUDGMENT),
            JobKind.REPLY: await runtime.timers.count(JobKind.REPLY),
        },
        "job_worker": _worker(runtime),
    }
    if runtime.settings.mcp_servers:
        body["mcp"] = await _mcp(runtime)
    return JSONResponse(body, status_code=200 if healthy else 503)
