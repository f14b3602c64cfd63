"""Logging: one line per event, job and LLM call; `LOG_FORMAT=json` gives one JSON object a line.

Context that applies to everything logged while an event or job is handled (event id,
channel, thread, job id) lives in a context variable and is attached to every record.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

CONTEXT_FIELDS = ("event_id", "channel", "thread_ts", "job_id")
_context: ContextVar[dict[str, str]] = ContextVar("tomo_log_context", default={})  # noqa: B039


@contextlib.contextmanager
def log_context(**fields: str | None) -> Iterator[None]:
    """Attach these fields to every record logged inside the block.

    A block with a `job_id` starts afresh: a job inherits the context of whatever request woke
    the scheduler, and that event's id is not the job's."""
    inherited = {} if fields.get("job_id") else _context.get()
    merged = {**inherited, **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "severity": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in (*CONTEXT_FIELDS, *getattr(record, "extra_fields", ())):
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        context = " ".join(
            f"{key}={getattr(record, key)}" for key in CONTEXT_FIELDS if hasattr(record, key)
        )
        return f"{line} [{context}]" if context else line


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time (test runners swap it)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def setup_logging(*, level: str, fmt: str) -> None:
    handler = _StderrHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(_ContextFilter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        if getattr(existing, "_tomo", False):
            root.removeHandler(existing)
    handler._tomo = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    if fmt == "json":
        # uvicorn's own lines (from start-up on, access log included) become JSON lines too.
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            server_logger = logging.getLogger(name)
            server_logger.handlers.clear()
            server_logger.propagate = True
    for noisy in (
        "httpx",
        "openai",  # at DEBUG it prints whole prompts: people's messages
        "uvicorn.access",  # tomo logs its own line per event; this one costs ~35 µs a request
        "httpcore",
        "LiteLLM",
        "litellm",
        "apscheduler",
        "aiosqlite",
        "alembic.runtime.plugins",
        "asyncio",
    ):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
