"""tomo's Prometheus metrics, counted in the web process and in its job worker alike
(docs/deploying.md#metrics).

prometheus-client's multiprocess mode: each process writes its values to memory-mapped files
in one directory, which the web process creates fresh at start-up (`create_directory`), hands
to its job worker, and removes at shutdown; `GET /metrics` (app.routes.metrics) reads them
all. Each instance has its own directory, so each exposes its own figures.

The library finds that directory in the environment variable PROMETHEUS_MULTIPROC_DIR, which
it reads when a value is created and when its `values` module is imported. So `start` — the
one place tomo writes to the environment — sets it, then makes the library's value class the
multiprocess one, then creates the metrics: nothing is counted before (counting is a no-op
until `start`, and always when METRICS_TOKEN is unset, so the ack path then pays nothing).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

ENVIRONMENT_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's name, not ours

# Seconds: an acknowledgement is milliseconds; a reply, seconds to the reply delay's minutes.
ACK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
REPLY_BUCKETS = (1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
_LABEL = re.compile(r"[a-z0-9_.]{1,48}")


def label(value: object) -> str:
    """A label value from outside (an event type, a tool's name): itself when it looks like
    one, else "other", so no payload can grow the number of series."""
    return value if isinstance(value, str) and _LABEL.fullmatch(value) else "other"


class _Metrics:
    def __init__(self) -> None:
        from prometheus_client import Counter, Histogram

        def counter(name: str, text: str, labels: tuple[str, ...]) -> Any:
            return Counter(name, text, labels, registry=None)

        self.acknowledged = counter(
            "tomo_events_acknowledged", "Slack events acknowledged, by event type", ("type",)
        )
        self.rejected = counter(
            "tomo_events_rejected", "Requests to /slack/events refused, by reason", ("reason",)
        )
        self.judgments = counter("tomo_judgments", "Judgments made, by outcome", ("outcome",))
        self.replies = counter(
            "tomo_replies", "Replies finished, by why and how they ended", ("reason", "outcome")
        )
        self.tool_calls = counter(
            "tomo_tool_calls", "Tool calls a reply's model made", ("tool", "outcome")
        )
        self.tokens = counter(
            "tomo_model_tokens", "Model tokens, by purpose and kind", ("purpose", "kind")
        )
        self.cost = counter(
            "tomo_model_cost_usd", "Model cost in USD where LiteLLM knows it", ("purpose",)
        )
        self.model_calls = counter(
            "tomo_model_calls", "Model calls, by purpose and outcome", ("purpose", "outcome")
        )
        self.slack_errors = counter(
            "tomo_slack_api_errors", "Slack Web API calls that failed", ("method", "kind")
        )
        self.ack_seconds = Histogram(
            "tomo_ack_seconds",
            "Time to acknowledge a Slack event (POST /slack/events)",
            buckets=ACK_BUCKETS,
            registry=None,
        )
        self.reply_seconds = Histogram(
            "tomo_reply_latency_seconds",
            "From a message's time in Slack to tomo's reply posted",
            ("reason",),
            buckets=REPLY_BUCKETS,
            registry=None,
        )
        self._acknowledged: dict[str, Any] = {}  # children by label: the ack path's lookups

    def ack(self, kind: str, seconds: float) -> None:
        child = self._acknowledged.get(kind)
        if child is None:
            child = self._acknowledged[kind] = self.acknowledged.labels(label(kind))
        child.inc()
        self.ack_seconds.observe(seconds)


_metrics: _Metrics | None = None


def create_directory() -> Path:
    """A fresh directory for this instance's values (the web process's, at start-up)."""
    return Path(tempfile.mkdtemp(prefix="tomo-metrics-"))


def start(directory: Path) -> None:
    """Count from now on, in `directory` (the web process's and its job worker's alike)."""
    global _metrics
    os.environ[ENVIRONMENT_VARIABLE] = str(directory)
    from prometheus_client import values

    values.ValueClass = values.MultiProcessValue()
    _metrics = _Metrics()


def stop(directory: Path | None) -> None:
    """Stop counting; the web process removes its directory (its job worker has stopped)."""
    global _metrics
    _metrics = None
    os.environ.pop(ENVIRONMENT_VARIABLE, None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


def counting() -> bool:
    return _metrics is not None


# -- what is counted (each a no-op until `start`) ---------------------------------------------


def acknowledged(payload: dict[str, Any], seconds: float) -> None:
    """An event acknowledged in `seconds` (its inner type for an event_callback)."""
    if _metrics is None:
        return
    kind = payload.get("type")
    if kind == "event_callback":
        event = payload.get("event")
        kind = event.get("type") if isinstance(event, dict) else None
    _metrics.ack(kind if isinstance(kind, str) else "other", seconds)


def rejected(reason: str) -> None:
    if _metrics is not None:
        _metrics.rejected.labels(reason).inc()


def count_judgment(outcome: str) -> None:
    """A judgment made: `respond`, `no_reply`, `invalid` (the model failed or answered
    nonsense), or `limited` (decided without the model: the own-voice limits)."""
    if _metrics is not None:
        _metrics.judgments.labels(outcome).inc()


def count_reply(*, reason: str, outcome: str, trigger_ts: str, posted: bool) -> None:
    """A reply finished (`outcome`: its claim's status); a posted one's latency from its
    message's Slack time."""
    if _metrics is None:
        return
    _metrics.replies.labels(label(reason), outcome).inc()
    if posted:
        try:
            latency = max(0.0, time.time() - float(trigger_ts))
        except ValueError:
            return
        _metrics.reply_seconds.labels(label(reason)).observe(latency)


def count_tool_call(tool: str, outcome: str) -> None:
    """A tool call a reply's model made, and how it ended (`ok`, `failed`, `refused`...)."""
    if _metrics is not None:
        _metrics.tool_calls.labels(label(tool), label(outcome)).inc()


def count_model_call(
    *,
    purpose: str,
    ok: bool,
    prompt_tokens: int | None = None,
    cached_tokens: int | None = None,
    completion_tokens: int | None = None,
    cost_usd: float | None = None,
) -> None:
    if _metrics is None:
        return
    purpose = label(purpose)
    _metrics.model_calls.labels(purpose, "ok" if ok else "failed").inc()
    for kind, tokens in (
        ("prompt", prompt_tokens),
        ("cached", cached_tokens),
        ("completion", completion_tokens),
    ):
        if tokens:
            _metrics.tokens.labels(purpose, kind).inc(tokens)
    if cost_usd:
        _metrics.cost.labels(purpose).inc(cost_usd)


def count_slack_error(method: str, kind: str) -> None:
    """A Slack Web API call failed: `rate_limited`, `token_refused`, `uncertain` (it may have
    been carried out) or `error`."""
    if _metrics is not None:
        _metrics.slack_errors.labels(label(method), kind).inc()
