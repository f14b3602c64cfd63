import pytest

from app.settings import SettingsError, load_settings

REQUIRED = {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")  # no .env file here
    settings = load_settings(**REQUIRED)
    assert settings.MIN_WAIT_SECONDS == 300
    assert settings.judgment_model == settings.memory_model == "openai/gpt-4o-mini"
    assert settings.DATABASE_URL == "sqlite:///./data/tomo.db"
    assert settings.THREAD_HISTORY_LIMIT == 20
    assert settings.admin_token is None


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
