"""FakeResponseUrl: Slack's response_url hooks (`https://hooks.slack.com/commands/T…/…/…`)
served on 127.0.0.1, recording what tomo posts after answering a slash command."""

from __future__ import annotations

import copy
import itertools
import json
import threading
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from tests.fakes._common import WAIT_SECONDS, wait_until
from tests.fakes.server import Served, ServerThread


class FakeResponseUrl(Served):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._posts: list[dict[str, Any]] = []
        app = Starlette(
            routes=[
                Route("/commands/{rest:path}", self._endpoint, methods=["POST"]),
                # An interaction's response_url (`https://hooks.slack.com/actions/T…/…/…`).
                Route("/actions/{rest:path}", self._endpoint, methods=["POST"]),
            ]
        )
        self._server = ServerThread(app, name="fake-response-url")

    def new_url(self, team_id: str = "T0001", *, kind: str = "commands") -> str:
        """A fresh response_url, shaped like Slack's (`kind` "actions": an interaction's)."""
        number = next(self._ids)
        return f"{self._server.base_url}/{kind}/{team_id}/{number:010d}/xXxXxXxXxXxX"

    def reset(self) -> None:
        with self._lock:
            self._posts = []

    def posts(self) -> list[dict[str, Any]]:
        """Each post's JSON body, with the `url` it went to."""
        with self._lock:
            return copy.deepcopy(self._posts)

    async def wait_for_posts(self, n: int, timeout: float = WAIT_SECONDS) -> list[dict[str, Any]]:
        await wait_until(lambda: len(self.posts()), n, timeout, "response_url posts")
        return self.posts()

    async def _endpoint(self, request: Request) -> PlainTextResponse:
        body = json.loads(await request.body())
        with self._lock:
            self._posts.append({"url": str(request.url), **body})
        return PlainTextResponse("ok")  # what Slack's hooks answer
