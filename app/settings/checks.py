"""What each setting's value must be, beyond its type and bounds: the checks the Settings
class's validators call, one function per rule. Each returns the value as it is kept (trimmed,
lower-cased, ordered) or raises ValueError with the words the start-up report shows after the
variable's name (app.settings.report)."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import SecretStr

from app.settings.mcp import parse_servers, raw_servers

# The tools a reply's model may be offered, in the order their definitions are given.
KNOWN_TOOLS = ("search_messages", "read_thread", "note", "fetch_url", "web_search")
# A bot token, as Slack issues it, and once token rotation has refreshed it.
BOT_TOKEN_PREFIXES = ("xoxb-", "xoxe.xoxb-")
# The settings that name one of a few choices (any case), with what each allows.
CHOICES: dict[str, tuple[frozenset[str], str]] = {
    "LLM_FUNCTION_CALLING": (
        frozenset({"auto", "true", "false"}),
        "is not a choice; allowed: auto, true or false",
    ),
    "LLM_VISION": (
        frozenset({"auto", "true", "false"}),
        "is not a choice; allowed: auto, true or false",
    ),
    "STREAM_REPLIES": (frozenset({"auto", "false"}), "is not a choice; allowed: auto or false"),
    "LOG_FORMAT": (frozenset({"text", "json"}), "is not a format; allowed: text or json"),
    "JOB_WORKER": (
        frozenset({"process", "inline"}),
        "is not a place to run jobs; allowed: process or inline",
    ),
}
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def channels(value: object) -> object:
    """AUTO_REPLY_CHANNELS written as comma-separated IDs."""
    if isinstance(value, str):
        return frozenset(part.strip() for part in value.split(",") if part.strip())
    return value


def tools(value: object) -> object:
    """TOOLS: comma-separated names, each one of KNOWN_TOOLS."""
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple | frozenset | set):
        unknown = sorted(set(value) - set(KNOWN_TOOLS))
        if unknown:
            raise ValueError(
                f"names unknown tools ({', '.join(unknown)}); allowed: "
                f"{', '.join(KNOWN_TOOLS)}, comma-separated, or empty for none"
            )
        # Always in one order, whatever order they were written in: the tools'
        # definitions then come in a stable order and the prompt's start stays cacheable.
        return tuple(name for name in KNOWN_TOOLS if name in value)
    return value


def choice(name: str, value: str) -> str:
    """One of CHOICES[name]'s words, lower-cased."""
    allowed, problem = CHOICES[name]
    if value.lower() not in allowed:
        raise ValueError(problem)
    return value.lower()


def blank_is_unset(value: str | None) -> str | None:
    return value.strip() or None if value is not None else None


class _Anything(dict[str, str]):
    """Every variable set (to nothing): for checking MCP_SERVERS' shape alone."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> str:
        return ""


def mcp_servers(value: str | None) -> str | None:
    """MCP_SERVERS' shape (its `${VAR}` are filled in once every setting is read)."""
    if value is None or not value.strip():
        return None
    value = raw_servers(value)
    parse_servers(value, environment=_Anything())
    return value


def timezone(value: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = value.strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            "is not a time zone; use an IANA name such as UTC, Asia/Tokyo or Europe/Berlin"
        ) from None
    return name


def log_level(value: str) -> str:
    level = value.upper()
    if level not in LOG_LEVELS:
        raise ValueError("is not a level; allowed: DEBUG, INFO, WARNING, ERROR or CRITICAL")
    return level


def job_backend(value: str, *, database_url: str) -> str:
    """JOB_BACKEND; Procrastinate keeps its jobs in PostgreSQL, so it needs DATABASE_URL to be
    one."""
    backend = value.lower()
    if backend not in {"apscheduler", "procrastinate"}:
        raise ValueError("is not a job backend; allowed: apscheduler or procrastinate")
    if backend == "procrastinate" and not database_url.startswith(("postgres:", "postgresql")):
        scheme = database_url.partition(":")[0] or "empty"
        raise ValueError(
            "needs PostgreSQL, where it keeps its jobs: DATABASE_URL must be a "
            f"postgresql:// (or postgres://) URL, not {scheme}"
        )
    return backend


def retention(value: float, *, windows: Mapping[str, float]) -> float:
    """MESSAGE_RETENTION_DAYS: 0, or no shorter than the windows memories are written from
    (`windows`: ACTIVE_CHANNEL_DAYS and THREAD_MEMORY_DAYS, those that are valid)."""
    if value == 0:
        return value
    shortest = max(windows.values(), default=0.0)
    if value < shortest:
        raise ValueError(
            f"must be at least ACTIVE_CHANNEL_DAYS and THREAD_MEMORY_DAYS ({shortest:g} "
            "days: memories are written from that window), or 0 to keep messages until "
            "they are deleted in Slack"
        )
    return value


def trailing_slash(value: str) -> str:
    return value if value.endswith("/") else value + "/"


def not_empty(value: SecretStr) -> SecretStr:
    if not value.get_secret_value().strip():
        raise ValueError("empty")
    return value


def bot_token(value: SecretStr) -> SecretStr:
    token = value.get_secret_value().strip()
    if not token.startswith(BOT_TOKEN_PREFIXES):
        # A token's kind (xoxp- a user's, xapp- an app-level one) is no secret.
        known = token.startswith(("xox", "xapp-"))
        what = f"a {token[:5]} token, not a bot token" if known else "not a bot token"
        raise ValueError(f"is {what} (xoxb-..., or xoxe.xoxb-... once Slack rotates it)")
    return value
