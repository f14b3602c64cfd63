"""The settings themselves: each variable's name, type, bounds and default, in the order the
start-up report lists their problems, and what tomo reads from them (a purpose's model, the
persona's prompt, the tokens). What a value must be beyond its type is app.settings.checks'."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.settings import checks
from app.settings.mcp import McpServer, parse_servers

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

DEFAULT_PERSONA_PROMPT = (
    "You are {name}, a friendly member of this Slack workspace. You talk like a good friend "
    "and colleague: warm, brief, curious and helpful, never pushy. You answer in the language "
    "the conversation is written in."
)


class DatabaseSettings(BaseSettings):
    """The one setting `alembic upgrade head` (Heroku's release phase) needs."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=True
    )

    DATABASE_URL: str = "sqlite:///./data/tomo.db"


class Settings(DatabaseSettings):
    # `.env`'s other variables are kept (model_extra; the environment's are not read): a
    # model provider's key, OPENAI_API_KEY..., which LiteLLM reads (provider_environment).
    model_config = SettingsConfigDict(extra="allow")

    SLACK_SIGNING_SECRET: SecretStr
    SLACK_BOT_TOKEN: SecretStr
    SLACK_API_URL: str = "https://slack.com/api/"
    # Per Web API call. A post that times out is looked up before it is ever sent again.
    SLACK_TIMEOUT_SECONDS: float = Field(default=10, gt=0, le=120)
    ADMIN_TOKEN: SecretStr | None = None

    LLM_MODEL: str = "openai/gpt-4o-mini"
    LLM_JUDGMENT_MODEL: str | None = None
    LLM_MEMORY_MODEL: str | None = None
    LLM_API_BASE: str | None = None
    LLM_API_KEY: SecretStr | None = None
    LLM_TIMEOUT_SECONDS: float = Field(default=60, gt=0)
    LLM_MAX_RETRIES: int = Field(default=2, ge=0, le=10)
    # Whether the reply and judgment models see images: "auto" asks LiteLLM of each model,
    # "true" or "false" decide for both.
    LLM_VISION: str = "auto"
    # Files people share: larger ones (by Slack's size) are never downloaded, only named; at
    # most this many images go into one prompt, the newest first.
    MAX_FILE_MB: float = Field(default=20, gt=0, le=1000)
    MAX_IMAGES_PER_PROMPT: int = Field(default=4, ge=0, le=20)
    # "auto": a reply to a person's request is streamed into Slack as the model writes it,
    # where Slack allows; "false": every reply is posted whole.
    STREAM_REPLIES: str = "auto"

    PERSONA_NAME: str = Field(default="tomo", min_length=1)
    PERSONA_PROMPT: str | None = None

    MIN_WAIT_SECONDS: float = Field(default=300, ge=0)
    # The lively-channel pace (docs/how-tomo-works.md#the-quiet-wait): in a channel where people
    # wrote more than a few messages within PACE_WINDOW_SECONDS (0: off), the quiet wait
    # shrinks with that number, never below PACE_MIN_WAIT_SECONDS.
    PACE_WINDOW_SECONDS: float = Field(default=600, ge=0)
    PACE_MIN_WAIT_SECONDS: float = Field(default=60, ge=0)
    JITTER_RATIO: float = Field(default=0.3, ge=0, le=1)
    MAX_REPLY_DELAY_SECONDS: float = Field(default=600, ge=0)
    MAX_MESSAGE_AGE_SECONDS: float = Field(default=43200, gt=0)
    THREAD_HISTORY_LIMIT: int = Field(default=20, ge=1, le=100)
    CHANNEL_MESSAGES_LIMIT: int = Field(default=50, ge=1, le=1000)
    ACTIVE_CHANNEL_DAYS: float = Field(default=7, gt=0)
    THREAD_MEMORY_DAYS: float = Field(default=7, gt=0)
    AUTO_REPLY_CHANNELS: Annotated[frozenset[str], NoDecode] = frozenset()
    MEMORY_UPDATE_INTERVAL_SECONDS: float = Field(default=3600, gt=0)
    SHORT_TERM_WINDOW_HOURS: float = Field(default=24, gt=0)
    # Stored messages (with what was read of their files), decisions, reply claims and LLM
    # call records older than this many days are deleted (docs/data-and-privacy.md); 0 keeps
    # them until they are deleted in Slack.
    MESSAGE_RETENTION_DAYS: float = Field(default=30, ge=0)
    # Own-voice limits (docs/how-tomo-works.md#judgment): after tomo joins a channel's conversation
    # on its own, no other autonomous reply there for this long; and at most this many per channel
    # per 24 h (0: never join on its own). Mentions and DMs are never limited.
    AUTONOMOUS_COOLDOWN_SECONDS: float = Field(default=900, ge=0)
    MAX_AUTONOMOUS_REPLIES_PER_DAY: int = Field(default=12, ge=0, le=10_000)
    # Follow-ups (docs/how-tomo-works.md#follow-ups): a conversation tomo posted in within this
    # long is one it takes part in (0: off), and a person's message there is judged after this
    # much quiet instead of MIN_WAIT_SECONDS.
    FOLLOW_UP_WINDOW_SECONDS: float = Field(default=1800, ge=0)
    FOLLOW_UP_WAIT_SECONDS: float = Field(default=5, ge=0)

    # Tools a reply's model may call (docs/tools.md), comma-separated; empty: none.
    # web_search is offered only when WEB_SEARCH_PROVIDER is set.
    TOOLS: Annotated[tuple[str, ...], NoDecode] = (
        "search_messages",
        "read_thread",
        "note",
        "fetch_url",
        "web_search",
    )
    # Whether the reply model is offered tools: "auto" asks LiteLLM of the model, "true" (an
    # OpenAI-compatible server LiteLLM does not know), "false".
    LLM_FUNCTION_CALLING: str = "auto"
    # Rounds of tool calls one reply may make before it must answer (0: no tools).
    MAX_TOOL_ROUNDS: int = Field(default=4, ge=0, le=10)
    # LiteLLM's search API for web_search: the provider (tavily, brave, searxng, exa_ai, ...),
    # its key and its base URL (a self-hosted SearXNG).
    WEB_SEARCH_PROVIDER: str | None = None
    WEB_SEARCH_API_KEY: SecretStr | None = None
    WEB_SEARCH_API_BASE: str | None = None
    # fetch_url reaches only public addresses unless this is true (an intranet; tests).
    FETCH_PRIVATE_ADDRESSES: bool = False
    # Bearer token for GET /metrics; unset: /metrics answers 404.
    METRICS_TOKEN: SecretStr | None = None
    # MCP servers whose tools a reply's model may call (app.settings.mcp, docs/tools.md#mcp):
    # a JSON array, or @ and the path of a JSON file holding one; unset: none.
    MCP_SERVERS: str | None = None
    _mcp_servers: tuple[McpServer, ...] = PrivateAttr(default=())
    # The IANA time zone (Asia/Tokyo) in which `/tomo digest` times are read and digests dated.
    TIMEZONE: str = "UTC"

    LOG_LEVEL: str = "INFO"
    LOG_FORMAT: str = "text"
    # Where judgment, reply and memory jobs run: "process" (a worker process of their own, so
    # their CPU never delays an acknowledgement) or "inline" (on the acknowledging event loop).
    JOB_WORKER: str = "process"
    # A worker that answers nothing, not even the parent's pings, for this long is hung (its
    # event loop blocked): it is killed and replaced, and the timers are restored.
    JOB_WORKER_TIMEOUT_SECONDS: float = Field(default=60, gt=0)
    # Which engine keeps the timers: "apscheduler" (this process's memory; one instance) or
    # "procrastinate" (Procrastinate jobs in the PostgreSQL database; any number of instances).
    JOB_BACKEND: str = "apscheduler"
    # With Procrastinate: an instance silent (no heartbeat) for this long is taken for dead,
    # and the jobs it was running run again elsewhere.
    JOB_STALLED_SECONDS: float = Field(default=30, ge=1, le=600)

    @field_validator("AUTO_REPLY_CHANNELS", mode="before")
    @classmethod
    def _split_channels(cls, value: object) -> object:
        return checks.channels(value)

    @field_validator("TOOLS", mode="before")
    @classmethod
    def _split_tools(cls, value: object) -> object:
        return checks.tools(value)

    @field_validator(*checks.CHOICES)
    @classmethod
    def _check_choice(cls, value: str, info: ValidationInfo) -> str:
        return checks.choice(str(info.field_name), value)

    @field_validator("WEB_SEARCH_PROVIDER", "WEB_SEARCH_API_BASE")
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        return checks.blank_is_unset(value)

    @field_validator("MCP_SERVERS")
    @classmethod
    def _check_mcp_servers(cls, value: str | None) -> str | None:
        return checks.mcp_servers(value)

    @model_validator(mode="after")
    def _fill_mcp_servers(self) -> Settings:
        """The servers, `${VAR}` read from the environment, or from `.env`."""
        if self.MCP_SERVERS is not None:
            environment = {**self.provider_environment, **os.environ}
            try:
                self._mcp_servers = parse_servers(self.MCP_SERVERS, environment=environment)
            except ValueError as error:
                raise ValueError(f"MCP_SERVERS {error}") from None
        return self

    @field_validator("TIMEZONE")
    @classmethod
    def _check_timezone(cls, value: str) -> str:
        return checks.timezone(value)

    @field_validator("LOG_LEVEL")
    @classmethod
    def _check_level(cls, value: str) -> str:
        return checks.log_level(value)

    @field_validator("JOB_BACKEND")
    @classmethod
    def _check_backend(cls, value: str, info: ValidationInfo) -> str:
        return checks.job_backend(value, database_url=str(info.data.get("DATABASE_URL", "")))

    @field_validator("MESSAGE_RETENTION_DAYS")
    @classmethod
    def _check_retention(cls, value: float, info: ValidationInfo) -> float:
        windows: dict[str, float] = {
            name: info.data[name]
            for name in ("ACTIVE_CHANNEL_DAYS", "THREAD_MEMORY_DAYS")
            if name in info.data
        }
        return checks.retention(value, windows=windows)

    @field_validator("SLACK_API_URL")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        return checks.trailing_slash(value)

    @field_validator("SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN")
    @classmethod
    def _not_empty(cls, value: SecretStr) -> SecretStr:
        return checks.not_empty(value)

    @field_validator("SLACK_BOT_TOKEN")
    @classmethod
    def _bot_token(cls, value: SecretStr) -> SecretStr:
        return checks.bot_token(value)

    @property
    def mcp_servers(self) -> tuple[McpServer, ...]:
        """The MCP servers of MCP_SERVERS, in its order; () when unset."""
        return self._mcp_servers

    @property
    def timezone(self) -> ZoneInfo:
        from zoneinfo import ZoneInfo

        return ZoneInfo(self.TIMEZONE)

    @property
    def retention_seconds(self) -> float | None:
        """How long stored messages and records are kept; None: until deleted in Slack."""
        return self.MESSAGE_RETENTION_DAYS * 86400.0 or None

    @property
    def judgment_model(self) -> str:
        return self.LLM_JUDGMENT_MODEL or self.LLM_MODEL

    @property
    def memory_model(self) -> str:
        return self.LLM_MEMORY_MODEL or self.LLM_MODEL

    @property
    def purpose_models(self) -> dict[str, str]:
        """The model of each purpose tomo asks a model for."""
        return {
            "reply": self.LLM_MODEL,
            "judgment": self.judgment_model,
            "memory": self.memory_model,
            "digest": self.LLM_MODEL,
        }

    @property
    def persona_prompt(self) -> str:
        return self.PERSONA_PROMPT or DEFAULT_PERSONA_PROMPT.format(name=self.PERSONA_NAME)

    @property
    def provider_environment(self) -> dict[str, str]:
        """The variables `.env` holds that are not settings (OPENAI_API_KEY, ...), for LiteLLM,
        which reads a provider's key from the environment (app.llm.provide_environment)."""
        extra = self.model_extra or {}
        return {k: v for k, v in extra.items() if isinstance(v, str) and k.isupper()}

    @property
    def admin_token(self) -> str | None:
        token = self.ADMIN_TOKEN.get_secret_value() if self.ADMIN_TOKEN else ""
        return token or None

    @property
    def metrics_token(self) -> str | None:
        token = self.METRICS_TOKEN.get_secret_value() if self.METRICS_TOKEN else ""
        return token or None
