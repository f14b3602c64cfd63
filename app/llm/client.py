"""Our thin wrapper over LiteLLM: per-purpose models, timeouts, retries, and every call recorded.

`import litellm` takes seconds, so it happens on a background thread after start-up
(`preload`); the first call waits for it if it has not finished. Its cost map is read from the
copy shipped in the package: nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable
from types import ModuleType
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.llm.messages import CACHE_MARKED, for_provider
from app.llm.records import Call, Completion, log_completion, record
from app.llm.tool_calls import StreamedCalls, ToolCall, calls_of
from app.llm.usage import answer_cost, cached_tokens, provider_of, streamed_cost
from app.observability.metrics import count_model_call
from app.settings import Settings

logger = logging.getLogger(__name__)


# A mock answer chosen per call from (purpose, messages): offline replay uses it.
MockResponse = Callable[[str, list[dict[str, str]]], str]


class LLMError(Exception):
    """The model could not answer (after LiteLLM's retries)."""


_module: ModuleType | None = None
_loading = threading.Lock()


def _load() -> ModuleType:
    global _module
    with _loading:
        if _module is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            # LiteLLM loads a `.env` into os.environ when imported, except in this mode (its
            # only effect): tomo reads `.env` through its settings alone (provide_environment).
            os.environ["LITELLM_MODE"] = "PRODUCTION"
            module = importlib.import_module("litellm")
            # The OpenAI client LiteLLM calls OpenAI-compatible models with imports its API
            # resources on first use (openai.resources: seconds on a busy machine, holding the
            # event loop of the first reply after a start): here, with the rest.
            importlib.import_module("openai.resources")
            # No feedback banner on stdout, no telemetry. No local token counting: tokens
            # are what the provider reports (OpenAI streams them with include_usage), and
            # tiktoken's encodings LiteLLM would load to estimate them cost the job worker
            # about 100 MB (docs/BENCHMARKS.md#memory).
            module.__dict__.update(
                suppress_debug_info=True, telemetry=False, disable_token_counter=True
            )
            _module = module
    return _module


def provide_environment(settings: Settings) -> None:
    """The variables of the settings' `.env` that are not settings (a provider's own key, as
    OPENAI_API_KEY) into this process's environment, where LiteLLM reads them; a variable the
    environment already has wins."""
    for name, value in settings.provider_environment.items():
        os.environ.setdefault(name, value)


def _preload() -> None:
    try:
        _load()
    except Exception:  # the first call will try again and report it
        logger.exception("importing LiteLLM failed")


def preload() -> None:
    """Start importing LiteLLM in the background, off the request path."""
    if _module is None:
        threading.Thread(target=_preload, name="litellm-import", daemon=True).start()


async def litellm_module() -> ModuleType:
    return _module if _module is not None else await asyncio.to_thread(_load)


def loaded() -> bool:
    """LiteLLM is imported in this process: a call made now waits for no import."""
    return _module is not None


class LLM:
    def __init__(
        self, settings: Settings, sessions: async_sessionmaker[AsyncSession] | None = None
    ) -> None:
        self._settings = settings
        self._sessions = sessions
        provide_environment(settings)
        self.models = settings.purpose_models
        self._vision: dict[str, bool] = {}  # model: whether it sees images
        self._functions: dict[str, bool] = {}  # model: whether it calls functions (tools)
        # Offline replay: LiteLLM's own mock responses (one text, or one chosen per call).
        self.mock_response: str | MockResponse | None = None

    async def sees_images(self, purpose: str) -> bool:
        """Whether the model of `purpose` takes images (LLM_VISION; `auto` asks LiteLLM)."""
        if self._settings.LLM_VISION != "auto":
            return self._settings.LLM_VISION == "true"
        model = self.models.get(purpose, self._settings.LLM_MODEL)
        if model not in self._vision:
            litellm = await litellm_module()
            try:
                self._vision[model] = bool(litellm.supports_vision(model=model))
            except Exception:  # a model LiteLLM does not know: it is not taken to see
                self._vision[model] = False
            logger.info("model %s sees images: %s", model, self._vision[model])
        return self._vision[model]

    async def calls_functions(self, purpose: str) -> bool:
        """Whether the model of `purpose` may be offered tools (LLM_FUNCTION_CALLING; `auto`
        asks LiteLLM, once per model)."""
        if self._settings.LLM_FUNCTION_CALLING != "auto":
            return self._settings.LLM_FUNCTION_CALLING == "true"
        model = self.models.get(purpose, self._settings.LLM_MODEL)
        if model not in self._functions:
            litellm = await litellm_module()
            try:
                self._functions[model] = bool(litellm.supports_function_calling(model=model))
            except Exception:  # a model LiteLLM does not know: offered no tools
                self._functions[model] = False
            logger.info("model %s calls functions: %s", model, self._functions[model])
        return self._functions[model]

    async def _call(
        self,
        purpose: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
    ) -> tuple[ModuleType, str, dict[str, Any]]:
        """LiteLLM, the model of `purpose` and the keyword arguments of its call."""
        litellm = await litellm_module()
        model = self.models.get(purpose, self._settings.LLM_MODEL)
        provider = provider_of(litellm, model)
        messages = for_provider(messages, marks=provider in CACHE_MARKED)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "timeout": self._settings.LLM_TIMEOUT_SECONDS,
            "num_retries": self._settings.LLM_MAX_RETRIES,
        }
        if self._settings.LLM_API_BASE:
            kwargs["api_base"] = self._settings.LLM_API_BASE
        if self._settings.LLM_API_KEY:
            kwargs["api_key"] = self._settings.LLM_API_KEY.get_secret_value()
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if tools:
            kwargs["tools"] = tools
        if tool_choice:
            kwargs["tool_choice"] = tool_choice
        if self.mock_response is not None:
            mock = self.mock_response
            kwargs["mock_response"] = mock if isinstance(mock, str) else mock(purpose, messages)
        return litellm, model, kwargs

    async def stream(
        self,
        *,
        purpose: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        reply_id: int | None = None,
    ) -> AsyncGenerator[str | ToolCall, None]:
        """The answer of the model of `purpose` piece by piece as it writes it (LiteLLM's
        `stream=True`), then the tools it asks to run (with `tools` offered), each whole;
        LLMError when it fails, before or between pieces. The call is recorded once the answer
        is complete (or has failed), its usage as the provider reports it, under the reply
        `reply_id` (a reply's claim) when given."""
        litellm, model, kwargs = await self._call(purpose, messages, None, tools, tool_choice)
        kwargs |= {"stream": True, "stream_options": {"include_usage": True}}
        started = time.time()
        usage: Any = None
        written: list[str] = []
        calls = StreamedCalls()
        try:
            response = await litellm.acompletion(**kwargs)
            async for chunk in response:
                usage = getattr(chunk, "usage", None) or usage
                choices = getattr(chunk, "choices", None) or []
                delta = choices[0].delta if choices else None
                calls.feed(delta)
                piece = getattr(delta, "content", None)
                if piece:
                    written.append(piece)
                    yield piece
        except GeneratorExit:  # its reader stopped early (Slack failed mid-stream)
            latency = (time.time() - started) * 1000
            abandoned = RuntimeError("the answer was left unread")
            await self._record(purpose, model, started, latency, None, abandoned, reply_id)
            raise
        except Exception as error:
            latency = (time.time() - started) * 1000
            await self._record(purpose, model, started, latency, None, error, reply_id)
            logger.warning("llm %s %s failed after %.0f ms: %s", purpose, model, latency, error)
            raise LLMError(f"{purpose} call to {model} failed: {type(error).__name__}") from error
        completion = Completion(
            text="".join(written),
            model=model,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cached_tokens=cached_tokens(usage),
            cost_usd=streamed_cost(litellm, model, usage),
            latency_ms=(time.time() - started) * 1000,
            tool_calls=calls.calls(),
        )
        await self._record(
            purpose, model, started, completion.latency_ms, completion, None, reply_id
        )
        log_completion(purpose, completion)
        for call in completion.tool_calls:
            yield call

    async def complete(
        self,
        *,
        purpose: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        reply_id: int | None = None,
    ) -> Completion:
        """One chat completion with the model configured for `purpose`: its text, and the
        tools it asks to run when `tools` were offered; recorded under `reply_id` if given."""
        litellm, model, kwargs = await self._call(purpose, messages, max_tokens, tools, tool_choice)
        started = time.time()
        try:
            response = await litellm.acompletion(**kwargs)
            message = response.choices[0].message
            text, calls = message.content or "", calls_of(message)
        except Exception as error:
            latency = (time.time() - started) * 1000
            await self._record(purpose, model, started, latency, None, error, reply_id)
            logger.warning("llm %s %s failed after %.0f ms: %s", purpose, model, latency, error)
            raise LLMError(f"{purpose} call to {model} failed: {type(error).__name__}") from error
        usage = getattr(response, "usage", None)
        completion = Completion(
            text=text,
            model=str(getattr(response, "model", None) or model),
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cached_tokens=cached_tokens(usage),
            cost_usd=answer_cost(litellm, response),
            latency_ms=(time.time() - started) * 1000,
            tool_calls=calls,
        )
        await self._record(
            purpose, model, started, completion.latency_ms, completion, None, reply_id
        )
        log_completion(purpose, completion)
        return completion

    async def _record(
        self,
        purpose: str,
        model: str,
        started: float,
        latency_ms: float,
        completion: Completion | None,
        error: BaseException | None = None,
        reply_id: int | None = None,
    ) -> None:
        count_model_call(
            purpose=purpose,
            ok=error is None,
            prompt_tokens=completion.prompt_tokens if completion else None,
            cached_tokens=completion.cached_tokens if completion else None,
            completion_tokens=completion.completion_tokens if completion else None,
            cost_usd=completion.cost_usd if completion else None,
        )
        if self._sessions is None:
            return
        call = Call(purpose, model, started, latency_ms, reply_id)
        await record(self._sessions, call, completion, error)
