"""GET /metrics (docs/deploying.md#metrics): behind METRICS_TOKEN (404 unset, 401 wrong), the
Prometheus text of everything the instance counted, its job worker's counts included; each
instance exposes its own."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from app.domain import ReplyReason
from app.observability.metrics import (
    ACK_BUCKETS,
    REPLY_BUCKETS,
    JudgmentOutcome,
    Rejection,
    SlackErrorKind,
    ToolOutcome,
)
from app.tools.registry import chosen
from app.wiring.known_labels import EVENT_TYPES
from tests.conftest import StartTomo, Tomo, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.processes import PROJECT_ROOT, Server, server
from tests.signing import sign

__all__ = ["server"]  # the fixture
pytestmark = pytest.mark.one_database  # the counts are the processes', not the database's

TOKEN = "metrics-secret"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


async def scrape(client: httpx.AsyncClient) -> Samples:
    response = await client.get("/metrics", headers=BEARER)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return samples(response.text)


async def test_without_a_token_there_is_no_metrics_endpoint(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        response = await tomo.client.get("/metrics", headers=BEARER)
        directory = tomo.runtime.metrics_directory
    assert response.status_code == 404 and directory is None


async def test_a_wrong_or_missing_token_is_refused(start_tomo: StartTomo) -> None:
    async with start_tomo(METRICS_TOKEN=TOKEN) as tomo:
        missing = await tomo.client.get("/metrics")
        wrong = await tomo.client.get("/metrics", headers={"Authorization": "Bearer nope"})
        basic = await tomo.client.get("/metrics", headers={"Authorization": f"Basic {TOKEN}"})
        right = await tomo.client.get("/metrics", headers=BEARER)
    assert [missing.status_code, wrong.status_code, basic.status_code] == [401, 401, 401]
    assert right.status_code == 200 and "tomo_pending_timers" in right.text


async def test_a_handled_mention_changes_the_counts(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    async with start_tomo(METRICS_TOKEN=TOKEN, MIN_WAIT_SECONDS=60) as tomo:
        directory = tomo.runtime.metrics_directory
        before = await scrape(tomo.client)
        slack.fail("users.info", error="user_not_found", times=100)
        ts = await tomo.message("<@UBOT> what time is it?", kind="app_mention", user="U9")
        await slack.wait_for_posts(1)
        await tomo.message("anyone around?", channel="C2")  # waits a minute for its judgment
        body = json.dumps({"type": "event_callback"}).encode()
        forged = sign(body, secret="not-the-secret")
        assert (await tomo.post_raw(body, forged)).status_code == 401
        await wait_for(lambda: _replied(tomo), timeout=30, what="the reply's count")
        after = await scrape(tomo.client)
        assert directory is not None and directory.is_dir()
    assert not directory.exists()  # removed at shutdown
    assert ts
    acknowledged = "tomo_events_acknowledged_total"
    assert value(after, acknowledged, type="app_mention") == 1 + value(
        before, acknowledged, type="app_mention"
    )
    assert value(after, acknowledged, type="message") >= 1
    assert value(after, "tomo_events_rejected_total", reason="signature") == 1
    assert value(after, "tomo_replies_total", reason="mention", outcome="posted") == 1
    assert value(after, "tomo_reply_latency_seconds_count", reason="mention") == 1
    assert value(after, "tomo_model_calls_total", purpose="reply", outcome="ok") == 1
    assert value(after, "tomo_model_tokens_total", purpose="reply", kind="prompt") > 0
    assert value(after, "tomo_ack_seconds_count") == 2  # the forged request is no event
    assert value(after, "tomo_slack_api_errors_total", method="users.info", kind="error") >= 1
    assert value(after, "tomo_pending_timers", kind="judgment") == 1
    assert value(before, "tomo_pending_timers", kind="judgment") == 0


async def _replied(tomo: Tomo) -> bool:
    found = await scrape(tomo.client)
    return value(found, "tomo_replies_total", reason="mention", outcome="posted") == 1


async def test_the_job_workers_counts_are_included(start_tomo: StartTomo, slack: FakeSlack) -> None:
    async with start_tomo(METRICS_TOKEN=TOKEN, JOB_WORKER="process") as tomo:
        await tomo.message("<@UBOT> hello from afar", kind="app_mention")
        # Generous: the worker imports LiteLLM first, seconds on a busy machine.
        await slack.wait_for_posts(1, timeout=180)
        await wait_for(lambda: _replied(tomo), timeout=60, what="the worker's reply count")
        found = await scrape(tomo.client)
        worker = tomo.runtime.worker
        assert worker is not None and worker.pid is not None
        files = {p.name for p in (tomo.runtime.metrics_directory or Path()).iterdir()}
    # The model was called in the worker process: its count is in its own file.
    assert value(found, "tomo_model_calls_total", purpose="reply", outcome="ok") == 1
    assert any(str(worker.pid) in name for name in files)


async def test_two_instances_expose_their_own(
    server: Callable[..., Server], tmp_path: Path
) -> None:
    # No judgment falls due while the test runs: one still loading LiteLLM when the instance
    # is stopped outlasts the grace on a busy machine (CI saw it), and counts nothing here.
    quiet = {"METRICS_TOKEN": TOKEN, "JOB_WORKER": "inline", "MIN_WAIT_SECONDS": "3600"}
    a = server(**quiet, DATABASE_URL=_sqlite(tmp_path, "a"))
    b = server(**quiet, DATABASE_URL=_sqlite(tmp_path, "b"))
    await a.start(timeout=60)
    await b.start(timeout=60)
    for text in ("one", "two", "three"):
        await a.message(text, channel="C1")
    await b.message("four", channel="C2")
    async with httpx.AsyncClient(base_url=a.url, timeout=WAIT_SECONDS) as client:
        on_a = await scrape(client)
    async with httpx.AsyncClient(base_url=b.url, timeout=WAIT_SECONDS) as client:
        on_b = await scrape(client)
    assert value(on_a, "tomo_events_acknowledged_total", type="message") == 3
    assert value(on_b, "tomo_events_acknowledged_total", type="message") == 1
    assert await a.stop(), a.output()
    assert await b.stop(), b.output()


def _sqlite(tmp_path: Path, name: str) -> str:
    return f"sqlite:///{tmp_path / f'{name}.db'}"


FAMILIES = {
    "tomo_events_acknowledged": "counter",
    "tomo_events_rejected": "counter",
    "tomo_judgments": "counter",
    "tomo_replies": "counter",
    "tomo_tool_calls": "counter",
    "tomo_model_tokens": "counter",
    "tomo_model_cost_usd": "counter",
    "tomo_model_calls": "counter",
    "tomo_slack_api_errors": "counter",
    "tomo_ack_seconds": "histogram",
    "tomo_reply_latency_seconds": "histogram",
    "tomo_pending_timers": "gauge",
}


def present(found: Samples, name: str, **labels: str) -> float:
    """The sample's value; the sample must be there (a missing series is no 0)."""
    key = (name, frozenset(labels.items()))
    assert key in found, f"no series {name}{labels}"
    return found[key]


def buckets(found: Samples, name: str, bounds: tuple[float, ...], **labels: str) -> list[float]:
    """A histogram's buckets (+Inf last), count and sum, each of which must be there."""
    les = [*(str(float(bound)) for bound in bounds), "+Inf"]
    values = [present(found, f"{name}_bucket", le=le, **labels) for le in les]
    return [
        *values,
        present(found, f"{name}_count", **labels),
        present(found, f"{name}_sum", **labels),
    ]


@pytest.mark.parametrize("worker", ["process", "inline"])
async def test_every_family_and_its_known_labels_are_there_from_the_first_scrape(
    start_tomo: StartTomo, worker: str
) -> None:
    """Right after a start, one event acknowledged: one scrape shows every family, each known
    label value at 0 (Prometheus' instrumentation guide: a series that appears only once
    something happened breaks rates and alerts). With the job worker process the zeros are
    the web process's: the worker may not have counted anything yet."""
    settings = {"METRICS_TOKEN": TOKEN, "JOB_WORKER": worker, "MIN_WAIT_SECONDS": 3600}
    async with start_tomo(**settings) as tomo:
        await tomo.message("good morning", channel="C2")  # judged in an hour: nothing runs
        response = await tomo.client.get("/metrics", headers=BEARER)
        tools = chosen(tomo.settings)
    assert response.status_code == 200, response.text
    families: dict[str, Metric] = {f.name: f for f in text_string_to_metric_families(response.text)}
    assert {name: families[name].type for name in FAMILIES if name in families} == FAMILIES
    found = samples(response.text)
    assert present(found, "tomo_events_acknowledged_total", type="message") == 1
    for kind in ("app_mention", "member_joined_channel", "app_uninstalled", "other"):
        assert present(found, "tomo_events_acknowledged_total", type=kind) == 0
    assert buckets(found, "tomo_ack_seconds", ACK_BUCKETS)[-2] == 1  # the one event
    for reason in Rejection:
        assert present(found, "tomo_events_rejected_total", reason=reason) == 0
    for outcome in JudgmentOutcome:
        assert present(found, "tomo_judgments_total", outcome=outcome) == 0
    for why in ReplyReason:
        for outcome in ("posted", "failed", "interrupted", "uncertain"):
            assert present(found, "tomo_replies_total", reason=why, outcome=outcome) == 0
        assert buckets(found, "tomo_reply_latency_seconds", REPLY_BUCKETS, reason=why) == [0] * (
            len(REPLY_BUCKETS) + 3
        )
    assert tools and "search_messages" in tools  # the tools the default settings offer
    for tool in tools:
        for outcome in ToolOutcome:
            assert present(found, "tomo_tool_calls_total", tool=tool, outcome=outcome) == 0
    assert present(found, "tomo_tool_calls_total", tool="unknown", outcome="unknown_tool") == 0
    for purpose in ("reply", "judgment", "memory"):
        for kind in ("prompt", "cached", "completion"):
            assert present(found, "tomo_model_tokens_total", purpose=purpose, kind=str(kind)) == 0
        assert present(found, "tomo_model_cost_usd_total", purpose=purpose) == 0
        for outcome in ("ok", "failed"):
            assert present(found, "tomo_model_calls_total", purpose=purpose, outcome=outcome) == 0
    for method in ("chat.postMessage", "chat.startStream", "conversations.replies", "users.info"):
        for kind in SlackErrorKind:
            assert present(found, "tomo_slack_api_errors_total", method=method, kind=str(kind)) == 0
    assert present(found, "tomo_pending_timers", kind="judgment") == 1


def test_the_known_event_types_are_the_manifests() -> None:
    """Every event slack-manifest.yml subscribes tomo to is a known label value (message.*
    are all `message`), and nothing else but Slack's URL check."""
    manifest = yaml.safe_load((PROJECT_ROOT / "slack-manifest.yml").read_text())
    subscribed = {
        e.split(".")[0] for e in manifest["settings"]["event_subscriptions"]["bot_events"]
    }
    assert set(EVENT_TYPES) == subscribed | {"url_verification"}
