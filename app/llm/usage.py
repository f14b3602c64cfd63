"""What a model call used and cost, as LiteLLM reports it."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def cached_tokens(usage: Any) -> int | None:
    """The prompt tokens the provider read from its cache, as LiteLLM reports them: OpenAI's
    `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`."""
    details = getattr(usage, "prompt_tokens_details", None)
    for value in (
        getattr(details, "cached_tokens", None),
        getattr(usage, "cache_read_input_tokens", None),
    ):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def provider_of(litellm: ModuleType, model: str) -> str | None:
    try:
        return str(litellm.get_llm_provider(model)[1])
    except Exception:  # an unknown model: LiteLLM's call reports it
        return None


def answer_cost(litellm: ModuleType, response: Any) -> float | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    if cost is None:
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:
            return None
    return float(cost) if cost is not None else None


def streamed_cost(litellm: ModuleType, model: str, usage: Any) -> float | None:
    """What a streamed answer cost, from the usage its last chunk reported."""
    try:
        prompt, written = litellm.cost_per_token(
            model=model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
        return float(prompt) + float(written)
    except Exception:  # a model LiteLLM has no price for
        return None
