"""Hermetic: a developer's `.env` and environment, every setting filled in, change nothing in the
tests' outcome, and no library loads `.env` into the process's environment: tomo reads it only
through its settings (app.settings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import hypothesis

from app.settings import Settings

PROJECT_ROOT = Path(__file__).resolve().parents[1]

# Every setting with a value other than its default (the two model settings in a form the tests'
# own never take), and a provider's key.
FILLED = {
    "SLACK_SIGNING_SECRET": "from-dotenv",
    "SLACK_BOT_TOKEN": "xoxb-from-dotenv",
    "SLACK_API_URL": "http://127.0.0.1:9/api/",
    "DATABASE_URL": "sqlite:///./from-dotenv.db",
    "ADMIN_TOKEN": "admin-from-dotenv",
    "LLM_MODEL": "openai/gpt-4o",
    "LLM_JUDGMENT_MODEL": "openai/gpt-4o",
    "LLM_MEMORY_MODEL": "openai/gpt-4o",
    "LLM_API_BASE": "http://127.0.0.1:9/v1",
    "LLM_API_KEY": "sk-llm-from-dotenv",
    "OPENAI_API_KEY": "sk-openai-from-dotenv",
    "ANTHROPIC_API_KEY": "sk-ant-from-dotenv",
    "MIN_WAIT_SECONDS": "7",
    "JITTER_RATIO": "0.5",
    "THREAD_HISTORY_LIMIT": "3",
    "LOG_LEVEL": "ERROR",
    "LOG_FORMAT": "json",
    "JOB_WORKER": "inline",
    "PERSONA_NAME": "dotenv-bot",
    "AUTO_REPLY_CHANNELS": "C1,C2",
    "LLM_VISION": "false",
    "TIMEZONE": "Asia/Tokyo",
    "MCP_SERVERS": '[{"name": "dotenv", "url": "http://127.0.0.1:9/mcp", "tools": ["look"]}]',
}


def filled_env_file(folder: Path) -> Path:
    """A `.env` in `folder` with every setting of app/settings/ filled in."""
    values = dict(FILLED)
    for name, field in Settings.model_fields.items():
        # The rest: a text setting (a choice) its default, a list its default, a number 1.
        default = field.default
        if isinstance(default, tuple):
            default = ",".join(default)
        values.setdefault(name, default if isinstance(default, str) else "1")
    path = folder / ".env"
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    return path


def python(code: str, *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -c CODE` in `cwd`: as python-dotenv does for an interactive or `-c` program,
    a `.env` loader looks for the file from `cwd` up."""
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(PROJECT_ROOT), **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_importing_litellm_leaves_the_environment_to_the_settings(tmp_path: Path) -> None:
    filled_env_file(tmp_path)
    code = (
        "import json, os\n"
        "from app.llm import client as llm\n"
        "from app.settings import load_settings\n"
        "llm._load()\n"
        "names = ('ADMIN_TOKEN', 'OPENAI_API_KEY', 'LLM_MODEL')\n"
        "before = {n: os.environ.get(n) for n in names}\n"
        "settings = load_settings()\n"
        "llm.provide_environment(settings)\n"
        "after = {n: os.environ.get(n) for n in names}\n"
        "print(json.dumps([before, settings.admin_token, after]))\n"
    )
    result = python(code, cwd=tmp_path, env={})
    assert result.returncode == 0, result.stderr
    before, admin_token, after = json.loads(result.stdout.splitlines()[-1])
    # LiteLLM's import left .env alone (before the fix, all three were .env's values).
    assert before == {"ADMIN_TOKEN": None, "OPENAI_API_KEY": None, "LLM_MODEL": None}
    # The settings read it; the provider's key, not a setting, goes to LiteLLM's environment.
    assert admin_token == "admin-from-dotenv"
    assert after == {
        "ADMIN_TOKEN": None,
        "OPENAI_API_KEY": "sk-openai-from-dotenv",
        "LLM_MODEL": None,
    }


def test_a_real_environment_variable_wins_over_dotenv_for_the_provider_key(
    tmp_path: Path,
) -> None:
    filled_env_file(tmp_path)
    code = (
        "import os\n"
        "from app.llm import client as llm\n"
        "from app.settings import load_settings\n"
        "llm.provide_environment(load_settings())\n"
        "print(os.environ['OPENAI_API_KEY'])\n"
    )
    result = python(code, cwd=tmp_path, env={"OPENAI_API_KEY": "sk-from-the-environment"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sk-from-the-environment"


def test_the_settings_and_offline_tests_pass_with_every_setting_in_dotenv_and_environment(
    tmp_path: Path,
) -> None:
    """pytest itself, run from a folder whose `.env` fills in every setting and a model key,
    with the same values in its environment: the tests that read settings or call the model,
    and the replay meant to be offline, pass as they do on a clean machine."""
    filled_env_file(tmp_path)
    # The replay's tests that must stay offline whatever the machine holds (its others are
    # about the conversation, not the environment: the suite runs them).
    replay = "tests/replay/test_replay.py::test_"
    modules = [
        "tests/test_settings.py",
        "tests/test_llm.py",
        f"{replay}offline_replay_of_the_english_example",
        f"{replay}mock_is_forced_even_with_a_model_configured",
        f"{replay}offline_is_chosen_only_without_a_key_or_api_base",
        f"{replay}the_command_replays_the_japanese_example_offline",
    ]
    code = (
        "import sys, pytest\n"
        f"sys.exit(pytest.main({[str(PROJECT_ROOT / m) for m in modules]!r} + "
        # Not the modules' uvicorn processes: their environment is their own.
        f"['-q', '-p', 'no:cacheprovider', '-k', 'not uvicorn', '--rootdir', "
        f"{str(PROJECT_ROOT)!r}]))\n"
    )
    environment = {name: value for name, value in FILLED.items()}
    result = python(code, cwd=tmp_path, env=environment)
    summary = result.stdout.strip().splitlines()[-1:] or [result.stderr]
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in summary[0] and "failed" not in summary[0]


def test_no_property_test_has_a_deadline() -> None:
    """hypothesis's default of 200 ms per example fails a property test on a busy machine: the
    tests' profile (tests/conftest.py) has none, nor the "too slow" health check."""
    assert hypothesis.settings.default.deadline is None
    assert hypothesis.HealthCheck.too_slow in hypothesis.settings.default.suppress_health_check
