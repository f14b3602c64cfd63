"""The tests' environment, made hermetic: nothing of the developer's decides an outcome."""

from __future__ import annotations

import os
import re

from app.settings import Settings

# A model provider's own variables (OPENAI_API_KEY, ...: with one, a replay meant to be offline
# calls the real model) and LiteLLM's switches.
PROVIDER_VARIABLE = re.compile(
    r".+_API_(KEY|BASE|VERSION|TOKEN)$|^LITELLM_|^AWS_|^AZURE_|^VERTEX|^GOOGLE_APPLICATION_"
)


def scrub_environment() -> None:
    """Every setting's variable and every provider variable leave this process's environment
    (and so the tests' subprocesses'). `.env` is read by the settings alone, which the tests
    build with _env_file=None; LiteLLM's own loading of it is off (app.llm)."""
    for name in list(os.environ):
        if name in Settings.model_fields or PROVIDER_VARIABLE.match(name):
            del os.environ[name]
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
