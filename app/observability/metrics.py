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
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from itertools import product
from pathlib import Path
from typing import Any

ENVIRONMENT_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"  # prometheus-client's name, not ours

# Seconds: an acknowledgement is milliseconds; a reply, seconds to the reply delay's minutes.
ACK_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
REPLY_BUCKETS = (1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
_LABEL = re.compile(r"[A-Za-z0-9_.]{1,48}")  # Slack method names have capitals


class JudgmentOutcome(StrEnum):
    RESPOND = "respond"
    NO_REPLY = "no_reply"
    INVALID = "invalid"  # the model failed or answered nonsense
    LIMITED = "limited"  # decided without the model: the own-voice limits


class Rejection(StrEnum):
    """Why a request to /slack/events was refused (app.routes.events)."""

    TOO_LARGE = "too_large"
    SIGNATURE = "signature"
    NOT_JSON = "not_json"
    NOT_RECORDED = "not_recorded"


class ToolOutcome(StrEnum):
    """How a tool call ended (app.conversation.reply.tool_loop)."""

    OK = "ok"
    FAILED = "failed"
    BAD_ARGUMENTS = "bad_arguments"
    ERROR = "error"
    NOT_RUN = "not_run"  # past a round's calls, or after the reply's tool time
    STOPPED = "stopped"  # cut off by the reply's tool time


class SlackErrorKind(StrEnum):
    RATE_LIMITED = "rate_limited"
    TOKEN_REFUSED = "token_refused"
    UNCERTAIN = "uncertain"  # it may have been carried out
    ERROR = "error"


TOKEN_KINDS = ("prompt", "cached", "completion")
CALL_OUTCOMES = ("ok", "failed")
UNKNOWN_TOOL = ("unknown", "unknown_tool")  # a name the model made up: one series for all


@dataclass(frozen=True)
class Known:
    """The label values this instance can count, which its families show at 0 from the first
    scrape (as Prometheus' instrumentation guide asks): gathered where the process is wired
    (app.wiring.known_labels), from the parts that own them."""

    event_types: tuple[str, ...] = ()
    reply_reasons: tuple[str, ...] = ()
    reply_outcomes: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # the tools replies offer
    purposes: tuple[str, ...] = ()  # what the model is asked for
    slack_methods: tuple[str, ...] = ()


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

    def zero(self, known: Known) -> None:
        """Every known series at 0, written now: a value exists once its child is made."""
        for kind in (*known.event_types, "other"):
            self._acknowledged[kind] = self.acknowledged.labels(label(kind))
        _children(self.rejected, Rejection)
        _children(self.judgments, JudgmentOutcome)
        _children(self.replies, known.reply_reasons, known.reply_outcomes)
        _children(self.reply_seconds, known.reply_reasons)
        _children(self.tool_calls, known.tools, ToolOutcome)
        self.tool_calls.labels(*UNKNOWN_TOOL)
        _children(self.tokens, known.purposes, TOKEN_KINDS)
        _children(self.cost, known.purposes)
        _children(self.model_calls, known.purposes, CALL_OUTCOMES)
        _children(self.slack_errors, known.slack_methods, SlackErrorKind)

    def ack(self, kind: str, seconds: float) -> None:
        child = self._acknowledged.get(kind)
        if child is None:
            child = self._acknowledged[kind] = self.acknowledged.labels(label(kind))
        child.inc()
        self.ack_seconds.observe(seconds)


def _children(family: Any, *values: Iterable[str]) -> None:
    for combination in product(*values):
        family.labels(*(label(value) for value in combination))


_metrics: _Metrics | None = None


def create_directory() -> Path:
    """A fresh directory for this instance's values (the web process's, at start-up)."""
    return Path(tempfile.mkdtemp(prefix="tomo-metrics-"))


def start(directory: Path, known: Known | None = None) -> None:
    """Count from now on, in `directory` (the web process's and its job worker's alike).
    `known`: the web process's, before its job worker exists: its files hold every known
    series at 0, so the first scrape shows them all, whatever the worker has counted yet (the
    collector adds up every process's values)."""
    global _metrics
    os.environ[ENVIRONMENT_VARIABLE] = str(directory)
    from prometheus_client import values

    values.ValueClass = values.MultiProcessValue()
    _metrics = _Metrics()
    if known is not None:
        _metrics.zero(known)


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


def count_judgment(outcome: JudgmentOutcome) -> None:
    """A judgment made, by outcome."""
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
    for kind, tokens in zip(
        TOKEN_KINDS, (prompt_tokens, cached_tokens, completion_tokens), strict=True
    ):
        if tokens:
            _metrics.tokens.labels(purpose, kind).inc(tokens)
    if cost_usd:
        _metrics.cost.labels(purpose).inc(cost_usd)


def count_slack_error(method: str, kind: SlackErrorKind) -> None:
    """A Slack Web API call failed."""
    if _metrics is not None:
        _metrics.slack_errors.labels(label(method), kind).inc()
