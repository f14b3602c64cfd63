"""GET /metrics: this instance's Prometheus metrics (app.observability.metrics), behind
`Authorization: Bearer $METRICS_TOKEN`; 404 while METRICS_TOKEN is unset, 401 with a wrong or
missing token (docs/deploying.md#metrics)."""

from __future__ import annotations

import asyncio
import hmac
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from app.jobs.kinds import JobKind
from app.wiring.runtime import Runtime

router = APIRouter()

PENDING_KINDS = (JobKind.JUDGMENT, JobKind.REPLY)


def _exposition(directory: Path, pending: dict[str, int]) -> tuple[bytes, str]:
    """The text every process of this instance counted, plus the timers pending now."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.multiprocess import MultiProcessCollector

    class Pending:
        def collect(self) -> list[GaugeMetricFamily]:
            gauge = GaugeMetricFamily(
                "tomo_pending_timers", "Timers pending now, by kind", labels=["kind"]
            )
            for kind, count in sorted(pending.items()):
                gauge.add_metric([kind], count)
            return [gauge]

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    registry.register(Pending())
    return generate_latest(registry), CONTENT_TYPE_LATEST


@router.get("/metrics", response_model=None)
async def metrics(request: Request) -> Response:
    runtime: Runtime = request.app.state.runtime
    token = runtime.settings.metrics_token
    directory = runtime.metrics_directory
    if token is None or directory is None:
        raise HTTPException(status_code=404)
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode(), token.encode()
    ):
        raise HTTPException(
            status_code=401, detail="unauthorized", headers={"WWW-Authenticate": "Bearer"}
        )
    # Counted, not listed: a listing builds and sorts every timer on the event loop that
    # acknowledges events (thousands, on a busy day).
    pending = {str(kind): await runtime.timers.count(kind) for kind in PENDING_KINDS}
    body, media_type = await asyncio.to_thread(_exposition, directory, pending)
    return Response(body, media_type=media_type)
