"""The baseline: a Bolt AsyncApp on FastAPI with no-op listeners (`uvicorn bench.bolt_app:api`).

Bolt verifies the signature and acknowledges; its listeners do nothing, and nothing is stored.
It calls auth.test once, on its first request, against BENCH_SLACK_API_URL (the stand-in).
"""

from __future__ import annotations

import os

from fastapi import FastAPI, Request
from fastapi.responses import Response
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

bolt = AsyncApp(
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],
    client=AsyncWebClient(token="xoxb-bench", base_url=os.environ["SLACK_API_URL"]),
)


@bolt.event("message")
async def on_message() -> None:
    return None


@bolt.event("app_mention")
async def on_mention() -> None:
    return None


handler = AsyncSlackRequestHandler(bolt)
api = FastAPI()


@api.post("/slack/events")
async def slack_events(request: Request) -> Response:
    return await handler.handle(request)


@api.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}
