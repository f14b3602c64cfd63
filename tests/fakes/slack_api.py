"""FakeSlack: a Slack Web API stand-in served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.fakes._common import read_params, wait_until
from tests.fakes.server import Served, ServerThread
from tests.fakes.slack_workspace import Params, SlackWorkspace

MethodHandler = Callable[[Params], dict[str, Any]]


@dataclass
class _Failure:
    status: int
    retry_after: int | None
    error: str | None


class FakeSlack(SlackWorkspace, Served):
    """Slack Web API fake: ``AsyncWebClient(token=..., base_url=fake.url)`` talks to it.

    Any token is accepted. Data helpers (``add_channel``, ``add_user``, ``add_message``),
    ``posts()`` and ``history()`` come from :class:`SlackWorkspace`.
    """

    def __init__(
        self,
        *,
        team_id: str = "T0001",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team: str = "Fake Team",
    ) -> None:
        super().__init__(team_id=team_id, bot_user_id=bot_user_id, bot_id=bot_id, team=team)
        self._clear_scripting()
        app = Starlette(routes=[Route("/api/{method}", self._endpoint, methods=["GET", "POST"])])
        self._server = ServerThread(app, name="fake-slack")

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/api/``; slack-sdk appends the method name."""
        return f"{self._server.base_url}/api/"

    def reset(self) -> None:
        """Forget all data, calls, posts, failures, delays and custom handlers."""
        self._clear_workspace()
        self._clear_scripting()

    def _clear_scripting(self) -> None:
        with self._lock:
            self._calls: list[tuple[str, Params]] = []
            self._failures: dict[str, list[_Failure]] = {}
            self._delays: dict[str, float] = {}
            self._custom: dict[str, MethodHandler] = {}

    def fail(
        self,
        method: str,
        *,
        status: int = 500,
        times: int = 1,
        retry_after: int | None = None,
        error: str | None = None,
    ) -> None:
        """The next ``times`` calls answer HTTP ``status`` (with ``Retry-After`` if given),
        or HTTP 200 ``{"ok": false, "error": error}`` when ``error`` is given."""
        failures = [_Failure(status, retry_after, error) for _ in range(times)]
        with self._lock:
            self._failures.setdefault(method, []).extend(failures)

    def delay(self, method: str, seconds: float) -> None:
        """Sleep ``seconds`` before answering each call to ``method`` (0 clears it)."""
        with self._lock:
            self._delays[method] = seconds

    def handle(self, method: str, handler: MethodHandler) -> None:
        """Answer ``method`` with ``handler(params)``: adds a method or overrides a built-in."""
        with self._lock:
            self._custom[method] = handler

    @property
    def calls(self) -> list[tuple[str, Params]]:
        """Every call received, in order, as ``(method, params)``."""
        with self._lock:
            return copy.deepcopy(self._calls)

    def calls_to(self, method: str) -> list[Params]:
        return [params for name, params in self.calls if name == method]

    async def wait_for_posts(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Wait (from any event loop) until at least ``n`` messages were posted."""
        await wait_until(lambda: len(self.posts()), n, timeout, "chat.postMessage posts")
        return self.posts()

    async def wait_for_calls(self, method: str, n: int, timeout: float = 5.0) -> list[Params]:
        """Wait (from any event loop) until ``method`` was called at least ``n`` times."""
        await wait_until(lambda: len(self.calls_to(method)), n, timeout, f"{method} calls")
        return self.calls_to(method)

    async def _endpoint(self, request: Request) -> JSONResponse:
        method = request.path_params["method"]
        params = await read_params(request)
        with self._lock:
            self._calls.append((method, copy.deepcopy(params)))
            pending = self._failures.get(method)
            failure = pending.pop(0) if pending else None
            delay = self._delays.get(method, 0.0)
            custom = self._custom.get(method)
        if delay > 0:
            await asyncio.sleep(delay)
        if failure is not None:
            return _failure_response(failure)
        if custom is not None:
            return JSONResponse(custom(copy.deepcopy(params)))
        body = self.answer(method, params)
        return JSONResponse(body if body is not None else {"ok": False, "error": "unknown_method"})


def _failure_response(failure: _Failure) -> JSONResponse:
    if failure.error is not None:
        return JSONResponse({"ok": False, "error": failure.error})
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(failure.retry_after)
    error = "ratelimited" if failure.status == 429 else "fake_http_error"
    return JSONResponse({"ok": False, "error": error}, status_code=failure.status, headers=headers)
