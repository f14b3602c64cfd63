"""Settings: defaults, the environment and .env, and the one block an operator reads when they
stop start-up, from load_settings and from `uvicorn app.main:app` alike."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.settings import SettingsError, load_settings

PROJECT_ROOT = Path(__file__).resolve().parents[1]

REQUIRED = {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}
SLACK = {"SLACK_SIGNING_SECRET": "a-secret", "SLACK_BOT_TOKEN": "xoxb-a-token"}


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")  # no .env file here
    settings = load_settings(**REQUIRED)
    assert settings.MIN_WAIT_SECONDS == 300
    assert settings.judgment_model == settings.memory_model == "openai/gpt-4o-mini"
    assert settings.DATABASE_URL == "sqlite:///./data/tomo.db"
    assert settings.THREAD_HISTORY_LIMIT == 20
    assert settings.admin_token is None
    assert settings.JOB_BACKEND == "apscheduler"


def test_procrastinate_needs_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    monkeypatch.setenv("JOB_BACKEND", "procrastinate")
    with pytest.raises(SettingsError) as stopped:
        load_settings(**REQUIRED)  # the default database: SQLite
    assert "JOB_BACKEND" in str(stopped.value) and "PostgreSQL" in str(stopped.value)
    for url in ("postgres://u:p@db.example/tomo", "postgresql+asyncpg://u@localhost/tomo"):
        assert load_settings(**REQUIRED, DATABASE_URL=url).JOB_BACKEND == "procrastinate"


def test_environment_is_read_and_channels_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-2")
    monkeypatch.setenv("AUTO_REPLY_CHANNELS", "C1, C2,,")
    monkeypatch.setenv("MIN_WAIT_SECONDS", "0.2")
    monkeypatch.setenv("LLM_JUDGMENT_MODEL", "openai/cheap")
    settings = load_settings()
    assert settings.AUTO_REPLY_CHANNELS == frozenset({"C1", "C2"})
    assert settings.MIN_WAIT_SECONDS == 0.2
    assert settings.judgment_model == "openai/cheap"
    assert settings.memory_model == settings.LLM_MODEL


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MIN_WAIT_SECONDS", "soon"),
        ("THREAD_HISTORY_LIMIT", "0"),
        ("THREAD_HISTORY_LIMIT", "101"),
        ("JITTER_RATIO", "2"),
        ("LOG_FORMAT", "xml"),
        ("JOB_BACKEND", "celery"),
        ("JOB_STALLED_SECONDS", "0"),
        ("LLM_VISION", "maybe"),
        ("MAX_FILE_MB", "0"),
        ("MAX_IMAGES_PER_PROMPT", "21"),
    ],
)
def test_invalid_value_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as stopped:
        load_settings(**REQUIRED)
    assert name in str(stopped.value)


def test_missing_secret_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    with pytest.raises(SettingsError) as stopped:
        load_settings(SLACK_SIGNING_SECRET="s")
    assert "SLACK_BOT_TOKEN" in str(stopped.value)


def test_secrets_do_not_show_in_repr() -> None:
    settings = load_settings(SLACK_SIGNING_SECRET="very-secret", SLACK_BOT_TOKEN="xoxb-hidden")
    assert "very-secret" not in repr(settings)
    assert "xoxb-hidden" not in repr(settings)


def test_report_names_each_variable_its_problem_and_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir("/")
    for name, value in {
        "MIN_WAIT_SECONDS": "soon",
        "THREAD_HISTORY_LIMIT": "0",
        "LLM_MAX_RETRIES": "1.5",
        "LOG_FORMAT": "xml",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "  ")
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    with pytest.raises(SettingsError) as stopped:
        load_settings()
    assert stopped.value.code == str(stopped.value)  # printed as is, exit status 1
    lines = str(stopped.value).splitlines()
    assert lines[0].startswith("tomo cannot start: 6 settings to fix")
    assert lines[1:7] == [
        "  SLACK_SIGNING_SECRET: empty in the environment; needs the Signing Secret"
        " (Slack app > Basic Information > App Credentials)",
        "  SLACK_BOT_TOKEN: missing (set in neither the environment nor .env); needs the bot"
        " token, xoxb-... (Slack app > OAuth & Permissions)",
        "  LLM_MAX_RETRIES: '1.5' is not a whole number; allowed: a whole number from 0 to 10",
        "  MIN_WAIT_SECONDS: 'soon' is not a number; allowed: a number, 0 or more",
        "  THREAD_HISTORY_LIMIT: '0' is too small; allowed: a whole number from 1 to 100",
        "  LOG_FORMAT: 'xml' is not a format; allowed: text or json",
    ]
    assert "cp .env.example .env" in lines[7]  # no .env here


def test_a_bad_secret_value_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    with pytest.raises(SettingsError) as stopped:
        load_settings(SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN=["xoxb-not-a-string"])
    assert "SLACK_BOT_TOKEN" in str(stopped.value)
    assert "xoxb-not-a-string" not in str(stopped.value)


def run_uvicorn(cwd: Path, **environment: str) -> subprocess.CompletedProcess[str]:
    """`uvicorn app.main:app` as the Procfile runs it, in `cwd`, with only these settings."""
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(PROJECT_ROOT), **environment}
    return subprocess.run(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--port", "0"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_uvicorn_with_a_bad_setting_prints_one_block_and_exits(tmp_path: Path) -> None:
    result = run_uvicorn(tmp_path, **SLACK, JITTER_RATIO="2", JOB_WORKER="threads")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "tomo cannot start: 2 settings to fix (environment variables, or .env here):",
        "  JITTER_RATIO: '2' is too large; allowed: a number from 0 to 1",
        "  JOB_WORKER: 'threads' is not a place to run jobs; allowed: process or inline",
        "Every setting is in .env.example and docs/settings.md.",
    ]


def test_uvicorn_with_a_copied_env_file_says_which_values_are_empty(tmp_path: Path) -> None:
    example = (PROJECT_ROOT / ".env.example").read_text()
    (tmp_path / ".env").write_text(example)  # copied, its two secrets left empty
    result = run_uvicorn(tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[:3] == [
        "tomo cannot start: 2 settings to fix (environment variables, or .env here):",
        "  SLACK_SIGNING_SECRET: empty in .env; needs the Signing Secret"
        " (Slack app > Basic Information > App Credentials)",
        "  SLACK_BOT_TOKEN: empty in .env; needs the bot token, xoxb-..."
        " (Slack app > OAuth & Permissions)",
    ]
    assert "cp .env.example" not in result.stderr


def test_message_retention_is_at_least_the_memory_windows_or_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir("/")
    assert load_settings(**REQUIRED).MESSAGE_RETENTION_DAYS == 30
    assert load_settings(**REQUIRED).retention_seconds == 30 * 86400
    assert load_settings(**REQUIRED, MESSAGE_RETENTION_DAYS="0").retention_seconds is None
    assert load_settings(**REQUIRED, MESSAGE_RETENTION_DAYS="7.5").MESSAGE_RETENTION_DAYS == 7.5
    for days, extra in [
        ("3", {}),  # below the default windows of 7 days
        ("10", {"THREAD_MEMORY_DAYS": "14"}),
        ("10", {"ACTIVE_CHANNEL_DAYS": "11"}),
        ("-1", {}),
        ("a month", {}),
    ]:
        with pytest.raises(SettingsError) as stopped:
            load_settings(**REQUIRED, MESSAGE_RETENTION_DAYS=days, **extra)
        assert "MESSAGE_RETENTION_DAYS" in str(stopped.value), (days, extra)


@pytest.mark.parametrize("token", ["xoxb-1-2-abc", "xoxe.xoxb-1-abc"])
def test_a_bot_token_and_a_rotated_one_are_taken(
    monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.chdir("/")
    settings = load_settings(SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN=token)
    assert settings.SLACK_BOT_TOKEN.get_secret_value() == token


def test_uvicorn_with_a_token_that_is_not_a_bot_token_says_so(tmp_path: Path) -> None:
    user_token = run_uvicorn(
        tmp_path, SLACK_SIGNING_SECRET="a-secret", SLACK_BOT_TOKEN="xoxp-1-2-3-secretpart"
    )
    anything = run_uvicorn(tmp_path, SLACK_SIGNING_SECRET="a-secret", SLACK_BOT_TOKEN="abc")
    for result in (user_token, anything):
        assert result.returncode == 1 and result.stdout == ""
        assert "secretpart" not in result.stderr and "abc" not in result.stderr
    assert user_token.stderr.splitlines()[1] == (
        "  SLACK_BOT_TOKEN: is a xoxp- token, not a bot token (xoxb-..., or xoxe.xoxb-... once"
        " Slack rotates it); needs the bot token, xoxb-... (Slack app > OAuth & Permissions)"
    )
    assert anything.stderr.splitlines()[1].startswith("  SLACK_BOT_TOKEN: is not a bot token")


def test_uvicorn_with_procrastinate_on_sqlite_names_both_settings(tmp_path: Path) -> None:
    result = run_uvicorn(
        tmp_path, **SLACK, JOB_BACKEND="procrastinate", DATABASE_URL="sqlite:///./tomo.db"
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines()[1] == (
        "  JOB_BACKEND: 'procrastinate' needs PostgreSQL, where it keeps its jobs: DATABASE_URL"
        " must be a postgresql:// (or postgres://) URL, not sqlite"
    )
