"""GET /admin/jobs and DELETE /admin/jobs/{id} (docs/how-tomo-works.md#interfaces): the timers,
behind the bearer token."""

from __future__ import annotations

import asyncio
import base64
import time
from datetime import datetime

from tests.conftest import ADMIN_TOKEN, StartTomo, judgment_json
from tests.fakes import FakeModel

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def test_admin_jobs_answers_404_when_no_token_is_set(start_tomo: StartTomo) -> None:
    async with start_tomo(ADMIN_TOKEN=None) as tomo:
        listing = await tomo.client.get("/admin/jobs", headers=BEARER)
        deleting = await tomo.client.delete("/admin/jobs/judgment:C1:", headers=BEARER)
    assert listing.status_code == 404 and deleting.status_code == 404


async def test_a_wrong_or_missing_token_gets_401(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        missing = await tomo.client.get("/admin/jobs")
        wrong = await tomo.client.get("/admin/jobs", headers={"Authorization": "Bearer nope"})
        prefix = await tomo.client.get(
            "/admin/jobs", headers={"Authorization": f"Bearer {ADMIN_TOKEN[:-1]}"}
        )
        not_bearer = await tomo.client.get("/admin/jobs", headers={"Authorization": ADMIN_TOKEN})
        delete = await tomo.client.delete(
            "/admin/jobs/judgment:C1:", headers={"Authorization": "Bearer nope"}
        )
    for response in (missing, wrong, prefix, not_bearer, delete):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith(("Bearer", "Basic"))


async def test_the_listing_shows_pending_judgments_and_replies(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=30, JITTER_RATIO=0) as tomo:
        before = time.time()
        await tomo.message("plain message")
        parent = await tomo.message("another one", channel="C2")
        await tomo.message("in a thread", channel="C2", thread_ts=parent, user="U2")
        response = await tomo.client.get("/admin/jobs", headers=BEARER)
        after = time.time()
    assert response.status_code == 200
    jobs = response.json()["jobs"]
    by_id = {job["id"]: job for job in jobs}
    assert {"judgment:C1:", f"judgment:C2:{parent}"} <= set(by_id)
    assert "judgment:C2:" not in by_id  # the thread reply took the top level's judgment
    for job in jobs:
        assert set(job) == {"id", "kind", "channel", "thread_ts", "run_at", "seconds_left"}
    job = by_id["judgment:C1:"]
    assert (job["kind"], job["channel"], job["thread_ts"]) == ("judgment", "C1", "")
    assert by_id[f"judgment:C2:{parent}"]["thread_ts"] == parent
    run_at = datetime.fromisoformat(job["run_at"].replace("Z", "+00:00"))
    assert run_at.tzinfo is not None and run_at.utcoffset().total_seconds() == 0
    assert job["run_at"].endswith(("Z", "+00:00"))
    # Set 30 s after the message came (however long that took), listed before `after`.
    assert before + 30 - 0.001 <= run_at.timestamp() <= after + 30 + 0.001
    assert run_at.timestamp() - after - 1 <= job["seconds_left"] <= 30
    periodic = [job for job in jobs if job["kind"] not in ("judgment", "reply")]
    assert all(job["channel"] is None for job in periodic)


async def test_deleting_a_pending_judgment_cancels_it(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.default_content = judgment_json(True)
    async with start_tomo(MIN_WAIT_SECONDS=0.4) as tomo:
        await tomo.message("will this be judged?")
        deleted = await tomo.client.delete("/admin/jobs/judgment:C1:", headers=BEARER)
        again = await tomo.client.delete("/admin/jobs/judgment:C1:", headers=BEARER)
        jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
        await asyncio.sleep(0.7)  # past the time it would have run
        decisions = await tomo.rows("SELECT * FROM judgment")
    assert deleted.status_code == 200 and again.status_code == 404
    assert "judgment:C1:" not in [job["id"] for job in jobs]
    assert model.requests == [] and decisions == []


async def test_deleting_with_a_browsers_credentials_needs_the_pages_origin(
    start_tomo: StartTomo,
) -> None:
    # Basic credentials are what a browser adds by itself to any site's request; a bearer
    # token (curl, scripts) is not, so only the former is checked for where it came from.
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{ADMIN_TOKEN}".encode()).decode()}
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("one", channel="C1")
        await tomo.message("two", channel="C2")
        no_origin = await tomo.client.delete("/admin/jobs/judgment:C1:", headers=basic)
        null = await tomo.client.delete(
            "/admin/jobs/judgment:C1:", headers=basic | {"Origin": "null"}
        )
        foreign = await tomo.client.delete(
            "/admin/jobs/judgment:C1:", headers=basic | {"Origin": "https://evil.example"}
        )
        pending = [t.id for t in (await tomo.runtime.timers.list())]
        own = await tomo.client.delete(
            "/admin/jobs/judgment:C1:", headers=basic | {"Origin": "http://tomo"}
        )
        by_curl = await tomo.client.delete("/admin/jobs/judgment:C2:", headers=BEARER)
    assert [r.status_code for r in (no_origin, null, foreign)] == [403] * 3
    assert "judgment:C1:" in pending
    assert own.status_code == 200 and by_curl.status_code == 200


async def test_periodic_jobs_cannot_be_cancelled(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        answers = [
            await tomo.client.delete(f"/admin/jobs/{name}", headers=BEARER)
            for name in ("memory", "prune", "directory")
        ]
        removed = await tomo.runtime.timers.remove("memory")
        jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
    assert [a.status_code for a in answers] == [409] * 3
    assert "periodic" in answers[0].json()["detail"]
    assert not removed
    assert {"memory", "prune", "directory"} <= {job["id"] for job in jobs}
