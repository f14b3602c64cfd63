"""GET /admin in a real browser: Debian's headless Chromium, driven by Playwright, against tomo
served by uvicorn on 127.0.0.1. Skips only when /usr/bin/chromium is absent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from app.db.models import Judgment
from app.jobs.kinds import JobKind
from app.main import create_app
from app.settings import Settings
from app.wiring.runtime import Runtime
from tests.conftest import ADMIN_TOKEN, SIGNING_SECRET, next_ts, tomo_settings
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.signing import sign

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is not installed (apt-get install chromium)"
)


class Served:
    def __init__(self, base_url: str, runtime: Runtime) -> None:
        self.base_url = base_url
        self.runtime = runtime
        self.http = httpx.AsyncClient(base_url=base_url, timeout=WAIT_SECONDS)

    async def message(self, text: str, *, channel: str = "C1", user: str = "U1") -> str:
        ts = next_ts()
        event = {"type": "message", "channel": channel, "user": user, "text": text, "ts": ts}
        envelope = {
            "type": "event_callback",
            "team_id": "T0001",
            "event_id": f"Ev{ts.replace('.', '')}",
            "event": {**event, "event_ts": ts, "channel_type": "channel"},
        }
        body = json.dumps(envelope).encode()
        response = await self.http.post(
            "/slack/events", content=body, headers=sign(body, secret=SIGNING_SECRET)
        )
        assert response.status_code == 200, response.text
        return ts


@contextlib.asynccontextmanager
async def serve_tomo(settings: Settings) -> AsyncIterator[Served]:
    """The whole app under uvicorn on a free port of 127.0.0.1, in this test's event loop."""
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.02)
        port = server.servers[0].sockets[0].getsockname()[1]
        served = Served(f"http://127.0.0.1:{port}", app.state.runtime)
        await asyncio.wait_for(served.runtime.identity.known.wait(), WAIT_SECONDS)
        try:
            yield served
        finally:
            await served.http.aclose()
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, WAIT_SECONDS)


def settings_for(slack: FakeSlack, model: FakeModel, database_url: str) -> Settings:
    # Timers that stay pending while the browser looks at them.
    return tomo_settings(slack, model, database_url, MIN_WAIT_SECONDS=3600, LOG_LEVEL="INFO")


async def test_admin_page_in_chromium_shows_timers_and_decisions_and_cancels(
    slack: FakeSlack, model: FakeModel, database_url: str, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    async with serve_tomo(settings_for(slack, model, database_url)) as tomo:
        waiting = await tomo.message("who wants to get ramen tonight?")
        judged = await tomo.message("the deploy is done", channel="C2", user="U2")
        async with tomo.runtime.sessions() as session:
            session.add(
                Judgment(
                    channel="C2",
                    latest_ts=judged,
                    decided_at=time.time() - 90,
                    should_respond=False,
                    reason="a status update that needs no answer",
                    confidence=0.82,
                    delay_seconds=None,
                    model="openai/test-model",
                )
            )
            await session.commit()

        denied = await tomo.http.get("/admin")
        assert denied.status_code == 401  # and the browser is asked for the token:
        assert denied.headers["www-authenticate"].startswith("Basic ")

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
            )
            try:
                context = await browser.new_context(
                    http_credentials={"username": "admin", "password": ADMIN_TOKEN},
                    viewport={"width": 1280, "height": 900},
                )
                page = await context.new_page()
                response = await page.goto(f"{tomo.base_url}/admin")
                assert response is not None and response.status == 200

                timer = page.locator('tr.timer[data-job-id="judgment:C1:"]')
                await expect(timer).to_be_visible()
                await expect(timer).to_contain_text("who wants to get ramen tonight?")
                await expect(timer.locator(".countdown")).to_contain_text("min")
                decision = page.locator("tr.decision")
                await expect(decision).to_have_count(1)
                await expect(decision).to_be_visible()
                await expect(decision).to_contain_text("a status update that needs no answer")
                await expect(decision).to_contain_text("stay silent")
                await expect(decision).to_contain_text("0.82")
                await expect(page.locator("#llm-usage")).to_contain_text("last 24h")
                await page.screenshot(path=str(tmp_path / "admin.png"), full_page=True)

                await timer.get_by_role("button", name="Cancel").click()
                await page.wait_for_url("**/admin?notice=*")
                await expect(page.locator(".notice")).to_contain_text("cancelled judgment:C1:")
                await expect(page.locator('tr.timer[data-job-id="judgment:C1:"]')).to_have_count(0)
                await page.screenshot(path=str(tmp_path / "admin-after-cancel.png"))

                phone = await browser.new_context(
                    http_credentials={"username": "admin", "password": ADMIN_TOKEN},
                    viewport={"width": 390, "height": 844},
                    is_mobile=True,
                )
                small = await phone.new_page()
                await small.goto(f"{tomo.base_url}/admin")
                await expect(small.locator("tr.decision")).to_be_visible()
                width = await small.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"the page scrolls sideways on a phone ({width} px)"
                await small.screenshot(path=str(tmp_path / "admin-phone.png"), full_page=True)
            finally:
                await browser.close()

        jobs = await tomo.http.get(
            "/admin/jobs", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}
        )
        assert "judgment:C1:" not in [job["id"] for job in jobs.json()["jobs"]]
        assert await tomo.runtime.timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="") is None
        assert waiting  # the message that set the cancelled timer was recorded
    for name in ("admin.png", "admin-after-cancel.png", "admin-phone.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    keep = os.environ.get("TOMO_SCREENSHOT_DIR")
    if keep:
        for name in ("admin.png", "admin-after-cancel.png", "admin-phone.png"):
            (Path(keep) / name).write_bytes((tmp_path / name).read_bytes())
