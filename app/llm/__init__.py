"""Everything tomo says to a model: the LiteLLM wrapper (`client`), a prompt's messages as each
provider takes them (`messages`), the prompt templates (`prompts`) and the provider key check
(`model_keys`). The names most callers want are here."""

from app.llm.client import (
    LLM,
    Completion,
    LLMError,
    MockResponse,
    cached_tokens,
    litellm_module,
    loaded,
    preload,
    provide_environment,
)
from app.llm.messages import system_message, with_images

__all__ = [
    "LLM",
    "Completion",
    "LLMError",
    "MockResponse",
    "cached_tokens",
    "litellm_module",
    "loaded",
    "preload",
    "provide_environment",
    "system_message",
    "with_images",
]
