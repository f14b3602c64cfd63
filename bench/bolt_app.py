"""The baseline: a Bolt AsyncApp on FastAPI (`uvicorn bench.bolt_app:api`).

Bolt verifies the signature and acknowledges; its listeners do nothing, and nothing is stored.
It calls auth.test once, on its first request, against BENCH_SLACK_API_URL (the stand-in).

With BENCH_BOLT_STORE set to a file path (`python -m bench.ack --bolt-stores`), Bolt instead
answers each event only after its listener has written the event to that SQLite file and
committed: `process_before_response=True`, Bolt's documented way to run a listener before the
acknowledgement (docs.slack.dev/tools/bolt-python/concepts/lazy-listeners), and the plainest
durable listener there is, a row and a commit per event through `sqlite3` on the event loop
(WAL, synchronous=NORMAL, as tomo's database). It is a baseline that keeps what tomo keeps
before it answers: the event, on disk.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

STORE = os.environ.get("BENCH_BOLT_STORE")

bolt = AsyncApp(
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],
    client=AsyncWebClient(token="xoxb-bench", base_url=os.environ["SLACK_API_URL"]),
    process_before_response=STORE is not None,
)


def _open(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute(
        "CREATE TABLE IF NOT EXISTS event (event_id TEXT PRIMARY KEY, body TEXT NOT NULL)"
    )
    return connection


database = _open(STORE) if STORE is not None else None


async def keep(body: dict[str, Any]) -> None:
    """The event on disk before Bolt answers (nothing when no store is set)."""
    if database is None:
        return
    with database:  # BEGIN ... COMMIT
        database.execute(
            "INSERT OR IGNORE INTO event (event_id, body) VALUES (?, ?)",
            (body.get("event_id"), json.dumps(body)),
        )


@bolt.event("message")
async def on_message(body: dict[str, Any]) -> None:
    await keep(body)


@bolt.event("app_mention")
async def on_mention(body: dict[str, Any]) -> None:
    await keep(body)


handler = AsyncSlackRequestHandler(bolt)
api = FastAPI()


@api.post("/slack/events")
async def slack_events(request: Request) -> Response:
    return await handler.handle(request)


@api.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
