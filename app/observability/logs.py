"""Logging: one line per event, job and LLM call; `LOG_FORMAT=json` gives one JSON object a line.

Context that applies to everything logged while an event or job is handled (event id,
channel, thread, job id) lives in a context variable and is attached to every record.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from contextvars import ContextVar, Token
from datetime import UTC, datetime
from typing import Any

CONTEXT_FIELDS = ("event_id", "channel", "thread_ts", "job_id")
_context: ContextVar[dict[str, str]] = ContextVar("tomo_log_context", default={})  # noqa: B039


class log_context:
    """Attach these fields to every record logged inside the block.

    A block with a `job_id` starts afresh: a job inherits the context of whatever request woke
    the scheduler, and that event's id is not the job's. (A class rather than a generator
    context manager: every acknowledgement enters one.)"""

    __slots__ = ("_fields", "_token")

    def __init__(self, **fields: str | None) -> None:
        self._fields = fields
        self._token: Token[dict[str, str]] | None = None

    def __enter__(self) -> None:
        fields = self._fields
        inherited = {} if fields.get("job_id") else _context.get()
        merged = {**inherited, **{k: v for k, v in fields.items() if v is not None}}
        self._token = _context.set(merged)

    def __exit__(self, *_exc: object) -> None:
        if self._token is not None:
            _context.reset(self._token)
            self._token = None


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        fields = record.__dict__
        for key, value in _context.get().items():
            fields.setdefault(key, value)  # a field passed in `extra` stays
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
        self._second = -1
        self._second_text = ""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        # The seconds part, the costly strftime, is the same for every line of a second.
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        second = int(record.created)
        if second != self._second:
            self._second_text = time.strftime(self.default_time_format, self.converter(second))
            self._second = second
        return f"{self._second_text},{int(record.msecs):03d}"

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = record.__dict__
        context = " ".join(f"{key}={fields[key]}" for key in CONTEXT_FIELDS if key in fields)
        return f"{line} [{context}]" if context else line


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is at the time (test runners swap it).

    On an event loop's thread, INFO and DEBUG lines are gathered and written together when
    the loop has run what is ready (one write for the lines of every event acknowledged in
    that turn, not one each: under load, a write gives the GIL to the threads that commit,
    and the loop then waits to get it back). A WARNING or worse, and every line logged
    outside an event loop, is written at once, after the lines gathered before it."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: list[str] = []

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record) + self.terminator
        except Exception:
            self.handleError(record)
            return
        loop = asyncio._get_running_loop() if record.levelno < logging.WARNING else None
        if loop is not None:
            if not self._pending:
                loop.call_soon(self.flush)
            self._pending.append(line)
            return
        self._pending.append(line)
        self.flush()

    def flush(self) -> None:
        with self.lock:  # type: ignore[union-attr]
            if not self._pending:
                return
            lines, self._pending = "".join(self._pending), []
            try:
                self.stream.write(lines)
                self.stream.flush()
            except Exception:
                sys.stderr.write(lines)  # a test runner closed the stream it swapped in


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
    # Neither format prints where a line was logged from, nor its thread or process: what the
    # logging HOWTO's "Optimization" section says to switch off, for a line per event.
    logging._srcfile = None  # type: ignore[attr-defined]
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
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
        "slack_sdk",  # a line per retry beside tomo's own; at DEBUG, whole request bodies
        "asyncio",
    ):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
