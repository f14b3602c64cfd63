"""/admin/* JSON: who may see it, and that it tells the truth about timers, decisions, memories
and LLM spend."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import unquote

import pytest

from app.db.models import LLMCall, Memory
from tests.conftest import ADMIN_TOKEN, StartTomo, judgment_json, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def basic(password: str, user: str = "admin") -> dict[str, str]:
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {encoded}"}


def answer(model: FakeModel, *, judgment: str, reply: str = "sure, here it is") -> None:
    def responder(request: dict[str, Any]) -> str:
        return judgment if purpose_of(request) == "judgment" else reply

    model.responder = responder


async def test_admin_is_404_without_a_token_configured(start_tomo: StartTomo) -> None:
    async with start_tomo(ADMIN_TOKEN=None) as tomo:
        for path in ("/admin", "/admin/overview", "/admin/jobs", "/admin/llm-usage"):
            response = await tomo.client.get(path, headers=BEARER)
            assert response.status_code == 404, path


async def test_wrong_or_missing_credentials_get_401_with_the_right_challenge(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo() as tomo:
        get = tomo.client.get
        missing_api = await get("/admin/decisions")
        wrong_api = await get("/admin/decisions", headers={"Authorization": "Bearer nope"})
        missing_page = await get("/admin")
        wrong_basic = await get("/admin", headers=basic("nope"))
        garbage_basic = await get("/admin", headers={"Authorization": "Basic %%%"})
        non_ascii = await get("/admin/jobs", headers=basic("トークン"))
        cancel = await tomo.client.post("/admin/cancel/judgment:C1:")
    for response in (missing_api, wrong_api):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
    for response in (missing_page, wrong_basic, garbage_basic, cancel):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Basic ")
    assert non_ascii.status_code == 401


async def test_bearer_and_basic_both_open_the_page_and_the_api(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        for headers in (BEARER, basic(ADMIN_TOKEN), basic(ADMIN_TOKEN, user="")):
            page = await tomo.client.get("/admin", headers=headers)
            jobs = await tomo.client.get("/admin/jobs", headers=headers)
            assert page.status_code == 200 and "text/html" in page.headers["content-type"]
            assert page.headers["cache-control"] == "no-store"
            assert jobs.status_code == 200


async def test_timers_show_the_waiting_judgment_and_jobs_keep_their_shape(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        ts = await tomo.message("is anyone around for lunch?")
        timers = (await tomo.client.get("/admin/timers", headers=BEARER)).json()["timers"]
        jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
    assert [t["id"] for t in timers] == ["judgment:C1:"]
    timer = timers[0]
    assert timer["kind"] == "judgment" and timer["latest_ts"] == ts
    assert timer["latest_text"] == "is anyone around for lunch?"
    assert timer["channel_name"] == "general"
    assert 55 < timer["seconds_left"] <= 60
    judgment_jobs = [job for job in jobs if job["id"] == "judgment:C1:"]
    assert len(judgment_jobs) == 1
    assert set(judgment_jobs[0]) == {"id", "kind", "channel", "thread_ts", "run_at", "seconds_left"}


async def test_decisions_tell_reason_confidence_delay_and_whether_a_reply_was_posted(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        answer(model, judgment=judgment_json(True, delay=0, reason="an open question"))
        asked = await tomo.message("does anyone know how to reset the VPN?")
        posts = await slack.wait_for_posts(1)
        answer(model, judgment=judgment_json(False, delay=None, reason="just banter"))
        chatted = await tomo.message("haha nice", channel="C2", user="U2")
        await wait_for(
            lambda: sum(purpose_of(r) == "judgment" for r in model.requests) == 2,
            what="the second judgment",
        )

        async def two_decisions() -> bool:
            return len(await tomo.rows("SELECT id FROM judgment")) == 2

        await wait_for(two_decisions, what="two stored decisions")
        decisions = (await tomo.client.get("/admin/decisions", headers=BEARER)).json()
        limited = (await tomo.client.get("/admin/decisions?limit=1", headers=BEARER)).json()
        bad_limit = await tomo.client.get("/admin/decisions?limit=0", headers=BEARER)
    silent, spoke = decisions["decisions"]  # newest first
    assert spoke["latest_ts"] == asked and spoke["channel_name"] == "general"
    assert spoke["should_respond"] is True and spoke["reason"] == "an open question"
    assert spoke["confidence"] == 0.9 and spoke["delay_seconds"] == 0
    assert spoke["replied"] is True and spoke["reply_ts"] == posts[0]["ts"]
    assert spoke["latest_text"] == "does anyone know how to reset the VPN?"
    assert silent["latest_ts"] == chatted and silent["channel"] == "C2"
    assert silent["should_respond"] is False and silent["reason"] == "just banter"
    assert silent["replied"] is False and silent["reply_status"] is None
    assert silent["model"] and silent["prompt_tokens"] > 0
    assert [d["id"] for d in limited["decisions"]] == [silent["id"]]
    assert bad_limit.status_code == 422


async def test_llm_usage_per_purpose_for_24_hours_and_7_days(start_tomo: StartTomo) -> None:
    now = time.time()

    def call(purpose: str, age: float, **fields: Any) -> LLMCall:
        values: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 10, "latency_ms": 50}
        return LLMCall(purpose=purpose, model="m", started_at=now - age, **(values | fields))

    async with start_tomo() as tomo:
        async with tomo.runtime.sessions() as session:
            session.add_all(
                [
                    call("judgment", 60, cost_usd=0.001),
                    call("judgment", 3600, cost_usd=0.002),
                    call(
                        "judgment", 120, success=False, prompt_tokens=None, completion_tokens=None
                    ),
                    call("reply", 2 * 86400, cost_usd=0.01, latency_ms=200),
                    call("reply", 3600),  # LiteLLM did not know its price
                    call("memory", 10 * 86400, cost_usd=5.0),  # older than a week
                ]
            )
            await session.commit()
        usage = (await tomo.client.get("/admin/llm-usage", headers=BEARER)).json()
    day = {row["purpose"]: row for row in usage["windows"]["24h"]["purposes"]}
    week = {row["purpose"]: row for row in usage["windows"]["7d"]["purposes"]}
    assert set(day) == {"judgment", "reply"} and set(week) == {"judgment", "reply"}
    assert day["judgment"]["calls"] == 3 and day["judgment"]["failures"] == 1
    assert day["judgment"]["prompt_tokens"] == 200 and day["judgment"]["completion_tokens"] == 20
    assert round(day["judgment"]["cost_usd"], 6) == 0.003
    assert day["reply"]["calls"] == 1 and day["reply"]["cost_usd"] is None
    assert day["reply"]["priced_calls"] == 0
    assert week["reply"]["calls"] == 2 and round(week["reply"]["cost_usd"], 6) == 0.01
    total = usage["windows"]["7d"]["total"]
    assert total["calls"] == 5 and total["failures"] == 1 and total["total_tokens"] == 440
    assert round(total["cost_usd"], 6) == 0.013 and total["priced_calls"] == 3
    # Latency: each purpose's average, and the total's over all its calls.
    assert week["reply"]["avg_latency_ms"] == 125.0 and week["judgment"]["avg_latency_ms"] == 50.0
    assert total["avg_latency_ms"] == 80.0
    assert usage["windows"]["24h"]["total"]["avg_latency_ms"] == 50.0


async def test_memories_and_overview(start_tomo: StartTomo) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        async with tomo.runtime.sessions() as session:
            session.add(
                Memory(scope="channel", scope_id="C1", kind="long_term", content="likes ramen")
            )
            session.add(Memory(scope="workspace", kind="short_term", content="busy week"))
            await session.commit()
        await tomo.message("hello")
        memories = (await tomo.client.get("/admin/memories", headers=BEARER)).json()
        overview = (await tomo.client.get("/admin/overview", headers=BEARER)).json()
    assert [(m["scope"], m["scope_id"], m["content"]) for m in memories["memories"]] == [
        ("channel", "C1", "likes ramen"),
        ("workspace", "", "busy week"),
    ]
    assert overview["memories"] == memories["memories"]
    assert [t["id"] for t in overview["timers"]] == ["judgment:C1:"]
    assert overview["decisions"] == []
    assert set(overview["llm_usage"]["windows"]) == {"24h", "7d"}


async def test_cancel_from_the_page_removes_the_timer_and_refuses_other_sites(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("anyone?")
        auth = basic(ADMIN_TOKEN)
        foreign = await tomo.client.post(
            "/admin/cancel/judgment:C1:", headers=auth | {"Origin": "https://evil.example"}
        )
        still = [t.id for t in (await tomo.runtime.timers.list())]
        cancel = await tomo.client.post(
            "/admin/cancel/judgment%3AC1%3A", headers=auth | {"Origin": "http://tomo"}
        )
        again = await tomo.client.post(
            "/admin/cancel/judgment:C1:", headers=auth | {"Origin": "http://tomo"}
        )
        jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
    assert foreign.status_code == 403 and "judgment:C1:" in still
    assert cancel.status_code == 303 and cancel.headers["location"].startswith("/admin?notice=")
    assert again.status_code == 303 and "already" in again.headers["location"]
    assert "judgment:C1:" not in [job["id"] for job in jobs]


@pytest.mark.parametrize(
    "origin",
    [None, "null", "https://evil.example", "http://tomo.evil.example", "http://tomo:8080", "tomo"],
)
async def test_the_page_cancels_nothing_without_its_own_origin(
    start_tomo: StartTomo, origin: str | None
) -> None:
    # Any Referer: the Origin decides (a missing or `null` one says nothing about the site).
    headers = basic(ADMIN_TOKEN) | {"Referer": "http://tomo/admin"}
    if origin is not None:
        headers["Origin"] = origin
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await tomo.message("anyone?")
        refused = await tomo.client.post("/admin/cancel/judgment:C1:", headers=headers)
        pending = [t.id for t in (await tomo.runtime.timers.list())]
    assert refused.status_code == 403
    assert "judgment:C1:" in pending


async def test_the_page_cannot_cancel_a_periodic_job(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        answers = [
            await tomo.client.post(
                f"/admin/cancel/{name}", headers=basic(ADMIN_TOKEN) | {"Origin": "http://tomo"}
            )
            for name in ("memory", "prune", "directory")
        ]
        pending = {t.id for t in (await tomo.runtime.timers.list())}
    assert [a.status_code for a in answers] == [303] * 3
    assert all("periodic" in unquote(a.headers["location"]) for a in answers)
    assert {"memory", "prune", "directory"} <= pending


async def test_cached_prompt_tokens_are_recorded_per_call_and_summed(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    """The prompt tokens a provider read from its cache (the stand-in reports, as OpenAI does,
    the start a prompt shares with the previous one) are kept with each call and summed."""
    model.responder = lambda request: judgment_json(False)

    async def calls(tomo: Any) -> list[dict[str, Any]]:
        return await tomo.rows("SELECT prompt_tokens, cached_tokens FROM llm_call ORDER BY id")

    async with start_tomo(MIN_WAIT_SECONDS=0.1) as tomo:
        await tomo.message("does anyone know where the projector remote went?")
        await wait_for(lambda: calls(tomo), what="the first judgment")
        await tomo.message("it was in the meeting room yesterday")
        await wait_for(lambda: len(model.requests) == 2, what="the second judgment")
        await wait_for(lambda: _two(calls(tomo)), what="both calls recorded")
        first, second = await calls(tomo)
        usage = (await tomo.client.get("/admin/llm-usage", headers=BEARER)).json()
    assert first["cached_tokens"] == 0
    assert 0 < second["cached_tokens"] < second["prompt_tokens"]
    [judgments] = usage["windows"]["24h"]["purposes"]
    assert judgments["cached_tokens"] == second["cached_tokens"]
    assert usage["windows"]["24h"]["total"]["cached_tokens"] == second["cached_tokens"]


async def _two(rows: Any) -> bool:
    return len(await rows) == 2
