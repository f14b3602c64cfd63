"""GET /healthz (SPEC §2): 200 while the database answers and the scheduler runs, else 503."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sqlalchemy import make_url

from app.db.engine import create_engine
from tests.conftest import StartTomo, wait_for


async def test_healthy_service_reports_database_scheduler_and_pending_jobs(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=30) as tomo:
        await tomo.message("something to judge later")
        response = await tomo.client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == "ok" and body["scheduler"] == "running"
    assert body["pending_jobs"] == {"judgment": 1, "reply": 0}
    assert body["job_worker"] == {"mode": "inline"}


async def test_unreachable_database_gives_503_and_recovery_gives_200(
    start_tomo: StartTomo, database_url: str, tmp_path: Path
) -> None:
    if database_url.startswith("sqlite"):
        database_url = f"sqlite:///{tmp_path / 'db' / 'tomo.db'}"
    async with start_tomo(DATABASE_URL=database_url) as tomo:
        runtime = tomo.runtime
        assert (await tomo.client.get("/healthz")).status_code == 200
        # Start-up's channel sync done, so no connection is checked out while it goes away.
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM channel"), timeout=3, what="the channel sync"
        )
        await asyncio.sleep(0.1)
        if database_url.startswith("sqlite"):
            # The database's directory goes away (a lost volume): no connection can open it.
            await runtime.engine.dispose()
            folder = Path(make_url(database_url).database or "").parent
            os.rename(folder, folder.with_name("moved"))
            down = await tomo.client.get("/healthz")
            os.rename(folder.with_name("moved"), folder)
        else:
            # The server stops answering: a closed port on this machine.
            engine = runtime.engine
            runtime.engine = create_engine("postgresql://nobody@127.0.0.1:9/none")
            down = await tomo.client.get("/healthz")
            await runtime.engine.dispose()
            runtime.engine = engine
        up = await tomo.client.get("/healthz")
    assert down.status_code == 503
    assert down.json()["status"] == "unavailable" and down.json()["database"] == "unreachable"
    assert up.status_code == 200


async def test_stopped_scheduler_gives_503(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        tomo.runtime.timers.shutdown()
        response = await tomo.client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["scheduler"] == "stopped"
