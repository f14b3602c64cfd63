"""FakeModel: an OpenAI-compatible chat completions stand-in served on 127.0.0.1."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from tests.fakes._common import WAIT_SECONDS, wait_until
from tests.fakes.model_stream import Pace, events
from tests.fakes.model_usage import image_tokens as image_tokens
from tests.fakes.model_usage import prompt_tokens, words
from tests.fakes.server import Served, ServerThread

ChatRequest = dict[str, Any]
Answer = str | dict[str, Any]
Responder = Callable[[ChatRequest], Answer | None]
Pacer = Callable[[int, ChatRequest], float]  # seconds still to wait before answering


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    kind = {400: "invalid_request_error", 429: "rate_limit_error"}.get(status, "server_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status, headers=headers)


class FakeModel(Served):
    """OpenAI-compatible fake for ``litellm.acompletion(model="openai/x", api_base=api_base)``.

    The answer to a request is, in order: ``responder(request)`` when it returns non-None, else
    the next ``enqueue``-d answer, else ``default_content``. An answer is the assistant content
    (``str``) or a ``dict``: with ``"choices"`` it is the whole response body, otherwise the
    assistant message fields (``content``, ``tool_calls``...) plus optional ``finish_reason``
    and ``usage``. ``responder`` runs on the server thread.
    """

    def __init__(self, *, default_content: str = "ok") -> None:
        self._initial_content = default_content
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.reset()
        routes = [
            Route(path, self._endpoint, methods=["POST"])
            for path in ("/v1/chat/completions", "/chat/completions")
        ]
        # Anthropic's Messages API, as LiteLLM calls it for `anthropic/...` models.
        routes += [
            Route(path, self._messages_endpoint, methods=["POST"])
            for path in ("/v1/messages", "/v1/v1/messages")
        ]
        self._server = ServerThread(Starlette(routes=routes), name="fake-model")

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"{self._server.base_url}/v1"

    def reset(self) -> None:
        """Forget requests, queued answers, failures, delays and the responder."""
        with self._lock:
            self.responder: Responder | None = None
            self._last_prompt: dict[str, list[str]] = {}
            self._last_prefix: dict[str, list[Any]] = {}
            self.default_content: str = self._initial_content
            self._requests: list[ChatRequest] = []
            self._queue: deque[Answer] = deque()
            self._failures: deque[tuple[int, float | None]] = deque()
            self._delays: deque[float] = deque()
            self.pace = Pace()
            self.stream_starts: list[float] = []  # time.monotonic() of each stream's first chunk
            self.answered: list[float] = []  # time.monotonic() each answer was complete
            self.pacer: Pacer | None = None

    def enqueue(self, *answers: Answer) -> None:
        """Queue answers, used first in, first out."""
        with self._lock:
            self._queue.extend(copy.deepcopy(answers))

    def fail(self, *, status: int = 500, times: int = 1, retry_after: float | None = None) -> None:
        """The next ``times`` requests answer HTTP ``status`` (with ``Retry-After`` if given)."""
        with self._lock:
            self._failures.extend((status, retry_after) for _ in range(times))

    def delay(self, seconds: float, *, times: int = 1) -> None:
        """Sleep ``seconds`` before answering each of the next ``times`` requests."""
        with self._lock:
            self._delays.extend(seconds for _ in range(times))

    def hold(self, pacer: Pacer | None) -> None:
        """Before answering request number N (0-based, in arrival order), wait while
        ``pacer(N, request)`` says seconds are left. It is asked again every 50 ms, so a test
        can hold an answer until it decides, and release it then. Runs on the server thread."""
        with self._lock:
            self.pacer = pacer

    @property
    def requests(self) -> list[ChatRequest]:
        """Every request body received (including failed ones), in order."""
        with self._lock:
            return copy.deepcopy(self._requests)

    @property
    def last_request(self) -> ChatRequest:
        requests = self.requests
        if not requests:
            raise AssertionError("the fake model received no request")
        return requests[-1]

    def requests_for(self, predicate: Callable[[ChatRequest], bool]) -> list[ChatRequest]:
        return [request for request in self.requests if predicate(request)]

    async def wait_for_requests(self, n: int, timeout: float = WAIT_SECONDS) -> list[ChatRequest]:
        """Wait (from any event loop) until at least ``n`` requests arrived."""
        await wait_until(lambda: len(self.requests), n, timeout, "chat completion requests")
        return self.requests

    async def _endpoint(self, request: Request) -> JSONResponse:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "request body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "request body is not a JSON object")
        with self._lock:
            number = len(self._requests)
            self._requests.append(copy.deepcopy(body))
            failure = self._failures.popleft() if self._failures else None
            delay = self._delays.popleft() if self._delays else 0.0
            pacer = self.pacer
        while pacer is not None and pacer(number, body) > 0:
            await asyncio.sleep(0.05)
            if await request.is_disconnected():
                return _error(499, "the client went away")
        if delay > 0:
            await asyncio.sleep(delay)
            if await request.is_disconnected():
                # Its client gave up (a timeout): an answer now would take one queued for
                # whichever test runs next.
                return _error(499, "the client went away")
        if failure is not None:
            status, retry_after = failure
            headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else None
            return _error(status, f"fake model failure (HTTP {status})", headers)
        try:
            answer = self._answer(body)
        except Exception as exc:
            return _error(500, f"responder raised {exc!r}")
        completion = self._completion(body, answer)
        if body.get("stream"):

            def noted(times: list[float]) -> Callable[[], None]:
                def note() -> None:
                    with self._lock:
                        times.append(time.monotonic())

                return note

            chunks = events(
                body,
                completion,
                answer,
                pace=self.pace,
                started=noted(self.stream_starts),
                ended=noted(self.answered),
            )
            return StreamingResponse(chunks, media_type="text/event-stream")
        with self._lock:
            self.answered.append(time.monotonic())
        return JSONResponse(completion)

    async def _messages_endpoint(self, request: Request) -> JSONResponse:
        """An answer in the shape of Anthropic's Messages API (docs.anthropic.com, "Messages"
        and "Prompt caching"): `content` blocks and `usage` with the cache's input tokens.
        The system blocks up to the last one marked `cache_control` are the cached prefix:
        read from the cache when the previous request to the same model had the same ones."""
        body = json.loads(await request.body())
        with self._lock:
            self._requests.append(copy.deepcopy(body))
        answer = self._answer(body)
        text = answer if isinstance(answer, str) else str(answer.get("content", ""))
        system = body.get("system") or []
        blocks = [system] if isinstance(system, str) else list(system)
        marked = [n for n, b in enumerate(blocks) if isinstance(b, dict) and b.get("cache_control")]
        prefix = blocks[: marked[-1] + 1] if marked else []
        size = sum(words(b.get("text")) for b in prefix if isinstance(b, dict))
        model = str(body.get("model"))
        seen = self._last_prefix.get(model) == prefix and bool(prefix)
        self._last_prefix[model] = prefix
        said = sum(words(m.get("content")) for m in body.get("messages") or [])
        said += sum(words(b.get("text")) for b in blocks if isinstance(b, dict))
        usage = {
            "input_tokens": max(1, said - size),
            "output_tokens": max(1, words(text)),
            "cache_creation_input_tokens": 0 if seen else size,
            "cache_read_input_tokens": size if seen else 0,
        }
        return JSONResponse(
            {
                "id": f"msg_fake{next(self._ids)}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": usage,
            }
        )

    def _answer(self, body: ChatRequest) -> Answer:
        responder = self.responder
        if responder is not None:
            answer = responder(copy.deepcopy(body))
            if answer is not None:
                return answer
        with self._lock:
            return self._queue.popleft() if self._queue else self.default_content

    def _cached(self, body: ChatRequest, messages: list[Any]) -> int:
        prompt = " ".join(
            f"{m.get('role')}: {m.get('content')}" for m in messages if isinstance(m, dict)
        ).split()
        model = str(body.get("model"))
        before = self._last_prompt.get(model, [])
        self._last_prompt[model] = prompt
        shared = 0
        for old, new in zip(before, prompt, strict=False):
            if old != new:
                break
            shared += 1
        return shared

    def _completion(self, body: ChatRequest, answer: Answer) -> dict[str, Any]:
        head = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake-model"),
        }
        if isinstance(answer, dict) and "choices" in answer:
            return head | copy.deepcopy(answer)
        fields = {"content": answer} if isinstance(answer, str) else copy.deepcopy(answer)
        usage = fields.pop("usage", None)
        fields.pop("fail_after", None)  # how a streamed answer breaks off (_events)
        pieces = fields.pop("chunks", None)  # where a streamed answer is cut (_events)
        if pieces and "content" not in fields:
            fields["content"] = "".join(str(piece) for piece in pieces)
        default_reason = "tool_calls" if fields.get("tool_calls") else "stop"
        finish_reason = fields.pop("finish_reason", default_reason)
        message = {"role": "assistant", "content": None} | fields
        if usage is None:
            messages = body.get("messages") or []
            prompt = max(
                1, sum(prompt_tokens(m.get("content")) for m in messages if isinstance(m, dict))
            )
            completion = max(1, words(message.get("content")))
            usage = {"prompt_tokens": prompt, "completion_tokens": completion}
            usage["total_tokens"] = prompt + completion
            # As OpenAI reports a prefix it read from its cache: here, the words this prompt
            # has in common from the start with the previous prompt to the same model.
            usage["prompt_tokens_details"] = {
                "cached_tokens": min(prompt, self._cached(body, messages))
            }
        choice = {"index": 0, "message": message, "finish_reason": finish_reason}
        return head | {"choices": [choice], "usage": usage}
