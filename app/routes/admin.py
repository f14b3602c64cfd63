"""/admin/*: the operator's view, behind `Authorization: Bearer $ADMIN_TOKEN`."""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request

from app.runtime import Runtime

router = APIRouter(prefix="/admin")


def admin_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    token = runtime.settings.admin_token
    if token is None:
        raise HTTPException(status_code=404)
    given = request.headers.get("authorization", "")
    scheme, _, credentials = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(credentials.strip(), token):
        raise HTTPException(
            status_code=401, detail="invalid admin token", headers={"WWW-Authenticate": "Bearer"}
        )
    return runtime


AdminRuntime = Annotated[Runtime, Depends(admin_runtime)]


@router.get("/jobs")
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
            for timer in runtime.timers.list()
        ]
    }


@router.delete("/jobs/{job_id:path}")
async def cancel_job(job_id: str, runtime: AdminRuntime) -> dict[str, Any]:
    if not runtime.timers.remove(job_id):
        raise HTTPException(status_code=404, detail=f"no job {job_id}")
    return {"cancelled": job_id}
