"""FakeSlack: a Slack Web API stand-in served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes._common import WAIT_SECONDS, read_params, wait_until
from tests.fakes.server import Served, ServerThread
from tests.fakes.slack_marks import MARK_METHODS
from tests.fakes.slack_streams import STREAM_METHODS, SlackStreams
from tests.fakes.slack_workspace import Params

MethodHandler = Callable[[Params], dict[str, Any]]


@dataclass
class _Hosted:
    body: bytes
    content_type: str
    status: int = 200
    delay: float = 0.0  # seconds before the body is sent
    location: str | None = None  # a redirect's target


# What files.slack.com answers a request it will not serve (no token, or one without
# files:read): its sign-in page, with a 200 (as ChatGPT-in-Slack and others found).
SIGN_IN_PAGE = (
    b'<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8">'
    b"<title>Slack</title></head><body><h1>Sign in to your workspace</h1></body></html>"
)


@dataclass
class _Failure:
    status: int
    retry_after: int | None
    error: str | None
    accept: bool = False  # the call is carried out (a message posted) before the failure
    body: bytes | None = None  # answered as it is, instead of a JSON error
    content_type: str = "application/json"
    hang: float = 0.0  # seconds before answering


class FakeSlack(SlackStreams, Served):
    """Slack Web API fake: ``AsyncWebClient(token=..., base_url=fake.url)`` talks to it.

    Any token is accepted. Data helpers (``add_channel``, ``add_user``, ``add_message``),
    ``posts()`` and ``history()`` come from :class:`SlackWorkspace`; ``reactions()`` and
    ``thread_status()`` from :class:`SlackMarks`; ``streams()`` (chat.startStream and the rest)
    from :class:`SlackStreams`.
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
        self._clear_marks()
        self._clear_streams()
        self._clear_scripting()
        app = Starlette(
            routes=[
                Route("/api/{method}", self._endpoint, methods=["GET", "POST"]),
                Route("/files-pri/{path:path}", self._file, methods=["GET"]),
            ]
        )
        self._server = ServerThread(app, name="fake-slack")

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/api/``; slack-sdk appends the method name."""
        return f"{self._server.base_url}/api/"

    def reset(self) -> None:
        """Forget all data, calls, posts, failures, delays and custom handlers."""
        self._clear_workspace()
        self._clear_marks()
        self._clear_streams()
        self._clear_scripting()

    def _clear_scripting(self) -> None:
        with self._lock:
            self._calls: list[tuple[str, Params]] = []
            self._call_times: list[float] = []  # time.monotonic() of each call's arrival
            self._failures: dict[str, list[_Failure]] = {}
            self._delays: dict[str, float] = {}
            self._custom: dict[str, MethodHandler] = {}
            self._hosted: dict[str, _Hosted] = {}
            self._file_requests: list[tuple[str, str | None]] = []
            self._sign_in_only = False
            self._refusing: str | None = None

    def refuse_token(self, error: str | None = "token_revoked") -> None:
        """Every call answers HTTP 200 ``{"ok": false, "error": error}``, as Slack answers a
        token revoked with the app's uninstall (its common errors, api.slack.com/web#errors);
        None: the token works again (the app installed anew)."""
        with self._lock:
            self._refusing = error

    def fail(
        self,
        method: str,
        *,
        status: int = 500,
        times: int = 1,
        retry_after: int | None = None,
        error: str | None = None,
        accept: bool = False,
    ) -> None:
        """The next ``times`` calls answer HTTP ``status`` (with ``Retry-After`` if given),
        or HTTP 200 ``{"ok": false, "error": error}`` when ``error`` is given. With ``accept``
        the call is carried out first, as when Slack posts a message and then answers 500."""
        self._add_failures(method, times, _Failure(status, retry_after, error, accept=accept))

    def garble(
        self,
        method: str,
        *,
        times: int = 1,
        body: bytes = b'{"ok": true, "channel": "C',
        content_type: str = "application/json",
        status: int = 200,
        accept: bool = True,
    ) -> None:
        """The next ``times`` calls are carried out (unless ``accept`` is false) and answered
        with ``body`` as it is: by default a JSON answer cut short, as a proxy or a dropped
        connection leaves it."""
        failure = _Failure(status, None, None, accept=accept, body=body, content_type=content_type)
        self._add_failures(method, times, failure)

    def hang(self, method: str, seconds: float, *, times: int = 1, accept: bool = False) -> None:
        """The next ``times`` calls answer only after ``seconds``. With ``accept`` the call is
        carried out at once and answered normally, late (a client with a shorter timeout has
        given up by then: Slack did it, the client does not know); without, it is never
        carried out and the late answer is a 504."""
        failure = _Failure(504, None, None, accept=accept, hang=seconds)
        self._add_failures(method, times, failure)

    def heal(self) -> None:
        """Forget every failure, garbled answer and hang still pending."""
        with self._lock:
            self._failures.clear()

    def _add_failures(self, method: str, times: int, failure: _Failure) -> None:
        with self._lock:
            self._failures.setdefault(method, []).extend(copy.copy(failure) for _ in range(times))

    def delay(self, method: str, seconds: float) -> None:
        """Sleep ``seconds`` before answering each call to ``method`` (0 clears it)."""
        with self._lock:
            self._delays[method] = seconds

    @property
    def files_url(self) -> str:
        """Where this stand-in serves files, as files.slack.com does: ``http://127.0.0.1:PORT``
        (a file object's URLs name ``/files-pri/...`` under it)."""
        return self._server.base_url

    def host_file(
        self,
        path: str,
        body: bytes,
        *,
        content_type: str = "application/octet-stream",
        status: int = 200,
        delay: float = 0.0,
        location: str | None = None,
    ) -> str:
        """Serve ``body`` at ``/files-pri/PATH`` to a request with a bot token (or redirect it
        to ``location``); the URL."""
        with self._lock:
            self._hosted[path] = _Hosted(body, content_type, status, delay, location)
        return f"{self.files_url}/files-pri/{path}"

    def sign_in_page_only(self) -> None:
        """Every file request gets the sign-in page (the token lacks files:read)."""
        with self._lock:
            self._sign_in_only = True

    @property
    def file_requests(self) -> list[tuple[str, str | None]]:
        """Each file request: its path under /files-pri/ and its Authorization header."""
        with self._lock:
            return list(self._file_requests)

    async def _file(self, request: Request) -> Response:
        path = request.path_params["path"]
        authorization = request.headers.get("authorization")
        with self._lock:
            self._file_requests.append((path, authorization))
            hosted = self._hosted.get(path)
            sign_in = self._sign_in_only
        if sign_in or not (authorization or "").startswith("Bearer xoxb-"):
            return Response(SIGN_IN_PAGE, media_type="text/html; charset=utf-8")
        if hosted is None:
            return Response(b"file_not_found", status_code=404, media_type="text/plain")
        if hosted.delay:
            await asyncio.sleep(hosted.delay)
        if hosted.location:
            return Response(status_code=302, headers={"location": hosted.location})
        return Response(hosted.body, status_code=hosted.status, media_type=hosted.content_type)

    def handle(self, method: str, handler: MethodHandler) -> None:
        """Answer ``method`` with ``handler(params)``: adds a method or overrides a built-in."""
        with self._lock:
            self._custom[method] = handler

    @property
    def calls(self) -> list[tuple[str, Params]]:
        """Every call received, in order, as ``(method, params)``."""
        with self._lock:
            return copy.deepcopy(self._calls)

    def timed_calls(self) -> list[tuple[float, str, Params]]:
        """Every call as ``(time.monotonic() of its arrival, method, params)`` (bench/)."""
        with self._lock:
            return [
                (at, m, copy.deepcopy(p))
                for at, (m, p) in zip(self._call_times, self._calls, strict=True)
            ]

    def calls_to(self, method: str) -> list[Params]:
        return [params for name, params in self.calls if name == method]

    async def wait_for_posts(self, n: int, timeout: float = WAIT_SECONDS) -> list[dict[str, Any]]:
        """Wait (from any event loop) until at least ``n`` messages were posted."""
        await wait_until(lambda: len(self.posts()), n, timeout, "chat.postMessage posts")
        return self.posts()

    async def wait_for_calls(
        self, method: str, n: int, timeout: float = WAIT_SECONDS
    ) -> list[Params]:
        """Wait (from any event loop) until ``method`` was called at least ``n`` times."""
        await wait_until(lambda: len(self.calls_to(method)), n, timeout, f"{method} calls")
        return self.calls_to(method)

    async def _endpoint(self, request: Request) -> Response:
        method = request.path_params["method"]
        params = await read_params(request)
        with self._lock:
            self._calls.append((method, copy.deepcopy(params)))
            self._call_times.append(time.monotonic())
            pending = self._failures.get(method)
            failure = pending.pop(0) if pending else None
            delay = self._delays.get(method, 0.0)
            custom = self._custom.get(method)
            refusing = self._refusing
        if refusing is not None:
            return JSONResponse({"ok": False, "error": refusing})
        if delay > 0:
            await asyncio.sleep(delay)
        if failure is None:
            return JSONResponse(self._carry_out(method, params, custom))
        answer = self._carry_out(method, params, custom) if failure.accept else None
        if failure.hang > 0:
            await asyncio.sleep(failure.hang)
            if answer is not None and failure.body is None:
                return JSONResponse(answer)  # done, and answered too late
        return _failure_response(failure)

    def _carry_out(
        self, method: str, params: Params, custom: MethodHandler | None
    ) -> dict[str, Any]:
        if custom is not None:
            return custom(copy.deepcopy(params))
        if method in MARK_METHODS:
            return self.answer_mark(method, params)
        if method in STREAM_METHODS:
            return self.answer_stream(method, params)
        body = self.answer(method, params)
        if body is None:
            return {"ok": False, "error": "unknown_method"}
        if method == "chat.postMessage" and body.get("ok"):
            self.after_post(str(params.get("channel")), params.get("thread_ts"))
        if method in ("conversations.history", "conversations.replies") and not _truthy(
            params.get("include_all_metadata")
        ):
            for message in body.get("messages", []):
                message.pop("metadata", None)  # Slack sends metadata only when asked
        return body


def _truthy(value: object) -> bool:
    return str(value).lower() in {"1", "true"}


def _failure_response(failure: _Failure) -> Response:
    if failure.body is not None:
        return Response(failure.body, status_code=failure.status, media_type=failure.content_type)
    if failure.error is not None:
        return JSONResponse({"ok": False, "error": failure.error})
    headers = {}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(failure.retry_after)
    error = "ratelimited" if failure.status == 429 else "fake_http_error"
    return JSONResponse({"ok": False, "error": error}, status_code=failure.status, headers=headers)
