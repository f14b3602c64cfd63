"""FakeSearXNG: a self-hosted SearXNG's JSON search API (`GET /search?q=…&format=json`) on
127.0.0.1, recording each query.

The answer's shape follows SearXNG's search API documentation (docs.searxng.org/dev/
search_api.html) and the fields its JSON results carry (searx/results.py: url, title,
content, engine, engines, positions, score, category, parsed_url, template,
publishedDate); like SearXNG it ignores any result count asked for and returns a page of
results. `fail(status)` and `slow(seconds)` change the next answers."""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.server import Served, ServerThread

PAGE = 8  # results per answer, whatever was asked


def result(n: int, query: str) -> dict[str, Any]:
    url = f"https://docs.example.org/{query.replace(' ', '-')}/{n}"
    parts = urlsplit(url)
    return {
        "url": url,
        "title": f"{query} — result {n}",
        "content": f"Snippet {n} about {query}: the latest release notes and what changed.",
        "engine": "duckduckgo",
        "engines": ["duckduckgo", "brave"],
        "positions": [n, n + 1],
        "score": round(2.0 / n, 3),
        "category": "general",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, ""],
        "template": "default.html",
        "publishedDate": None,
        "thumbnail": "",
        "img_src": "",
        "priority": "",
    }


class FakeSearXNG(Served):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()
        app = Starlette(routes=[Route("/search", self._search)])
        self._server = ServerThread(app, name="fake-searxng")

    @property
    def url(self) -> str:
        return self._server.base_url

    def reset(self) -> None:
        with self._lock:
            self.queries: list[dict[str, str]] = []
            self._status: int | None = None
            self._delay = 0.0
            self.extra: list[dict[str, Any]] = []  # results served first (a test's own)

    def fail(self, status: int) -> None:
        with self._lock:
            self._status = status

    def slow(self, seconds: float) -> None:
        with self._lock:
            self._delay = seconds

    async def _search(self, request: Request) -> Response:
        params = dict(request.query_params)
        with self._lock:
            self.queries.append(params)
            status, delay, extra = self._status, self._delay, list(self.extra)
        if delay:
            await asyncio.sleep(delay)
        if status is not None:
            return Response("Internal Server Error", status_code=status, media_type="text/html")
        query = params.get("q", "")
        results = extra + [result(n, query) for n in range(1, PAGE + 1)]
        return JSONResponse(
            {
                "query": query,
                "number_of_results": 0,
                "results": results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [f"{query} changelog"],
                "unresponsive_engines": [],
            }
        )
