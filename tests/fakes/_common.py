"""Small helpers shared by the fake servers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request


async def read_params(request: Request) -> dict[str, Any]:
    """Merge query string, form-encoded body and JSON object body into one dict."""
    params: dict[str, Any] = dict(request.query_params)
    body = await request.body()
    if not body:
        return params
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "application/json":
        parsed = json.loads(body)
        if isinstance(parsed, dict):
            params.update(parsed)
    elif content_type == "application/x-www-form-urlencoded":
        params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    return params


# How long a test waits for a condition before it fails: generous, since the suite runs on a
# busy 2-core machine; a condition that comes sooner ends the wait at once.
WAIT_SECONDS = 60.0
# What waits for a job worker, which runs at niceness 10: beside two busy loops at 0 it gets a
# tenth of the machine, and its import of LiteLLM alone took 14 s.
WORKER_WAIT_SECONDS = 180.0


async def wait_until(count: Callable[[], int], n: int, within: float, what: str) -> None:
    """Poll ``count()`` from any event loop until it reaches ``n`` or time out."""
    deadline = time.monotonic() + within
    while True:
        current = count()
        if current >= n:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {within}s waiting for {n} {what}; got {current}")
        await asyncio.sleep(0.01)
