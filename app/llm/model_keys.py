"""The model provider's key: handed to LiteLLM from `.env` through the settings, and checked once
LiteLLM is loaded, so a missing key is one WARNING at start-up (and on /healthz) rather than a
`Missing credentials` on the first mention.

LiteLLM reads a provider's key from its own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) in
the environment; those `.env` holds come through the settings (app.llm.provide_environment).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from app.llm.client import litellm_module, provide_environment
from app.settings import Settings

logger = logging.getLogger(__name__)

# What /healthz says of the model key before the check has run (LiteLLM still loading).
CHECKING = "checking"
OK = "ok"


async def missing_model_key(settings: Settings, *, models: Iterable[str] = ()) -> str | None:
    """Why these models (by default the reply, judgment and memory models) cannot be asked for
    want of a key, as LiteLLM tells from the environment; None when they can, or when
    LLM_API_KEY or LLM_API_BASE is set (a key, or a server of one's own, is given)."""
    if settings.LLM_API_BASE or settings.LLM_API_KEY:
        return None
    provide_environment(settings)
    litellm = await litellm_module()
    wanted = tuple(models) or (settings.LLM_MODEL, settings.judgment_model, settings.memory_model)
    for model in dict.fromkeys(wanted):
        check = litellm.validate_environment(model=model)
        if not check.get("keys_in_environment"):
            missing = ", ".join(check.get("missing_keys") or []) or "a key"
            return f"no LLM_API_BASE or LLM_API_KEY, and {missing} is not set for {model}"
    return None


async def check_model_key(settings: Settings) -> str:
    """The check at start-up: `ok`, or the problem, which is logged as a WARNING."""
    try:
        problem = await missing_model_key(settings)
    except Exception:
        logger.exception("the model key could not be checked")
        return "unknown"
    if problem is None:
        return OK
    logger.warning(
        "model key missing: %s. Every judgment and reply will fail until it is set: put the "
        "provider's key in its variable (in the environment or .env), or set LLM_API_KEY.",
        problem,
    )
    return problem
