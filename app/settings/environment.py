"""Settings to and from the environment: read at start-up, where missing or invalid values stop
the process with one block an operator reads, and written back out for a child process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError as SourceError

from app.settings.model import Settings
from app.settings.report import describe


class SettingsError(SystemExit):
    """Start-up stops: settings are missing or invalid. Its message, the one block an operator
    reads, names each variable with its problem; as a SystemExit it is printed without a
    traceback and the process exits with status 1."""


def settings_environment(settings: Settings) -> dict[str, str]:
    """These settings as environment variables, secrets included, for a child process (the
    job worker) to read back exactly, and `.env`'s other variables (a provider's key, which
    LiteLLM reads from the environment); unset values are left out."""
    environment = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if value is None:
            continue
        if isinstance(value, SecretStr):
            value = value.get_secret_value()
        elif isinstance(value, frozenset):
            value = ",".join(sorted(value))
        elif isinstance(value, tuple):
            value = ",".join(value)
        environment[name] = str(value)
    for name, value in (settings.model_extra or {}).items():  # `.env`'s others: provider keys
        if value is not None:
            environment.setdefault(name, str(value))
    return environment


def load_settings(**overrides: object) -> Settings:
    """Read the settings; missing or invalid values stop start-up with one block naming each
    variable, its problem and what is allowed (app.settings.report)."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        report = describe(
            error.errors(),
            fields=Settings.model_fields,
            secrets={
                "MCP_SERVERS",  # its headers may hold a secret written in place of ${VAR}
                *(
                    name
                    for name, field in Settings.model_fields.items()
                    if SecretStr in (field.annotation, *get_args(field.annotation))
                ),
            },
            environment={n for n in Settings.model_fields if n in os.environ},
            env_file=Path(".env").is_file(),
        )
    except SourceError as error:  # .env unreadable, or a value its parser refuses
        report = f"tomo cannot start: the settings cannot be read: {error}"
    raise SettingsError(report)
