"""MCP_SERVERS read at start-up (app/settings/mcp.py): the JSON or an @file, `${VAR}` from the
environment or .env, checked whole; anything wrong stops start-up with a message that names
MCP_SERVERS, and never shows a header's value; the job worker reads back the same servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.settings import Settings, SettingsError, load_settings, settings_environment
from app.settings.mcp import parse_servers

REQUIRED = {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-1"}
JIRA = {
    "name": "jira",
    "url": "https://jira.example/mcp",
    "headers": {"Authorization": "Bearer ${JIRA_TOKEN}"},
    "tools": ["search_issues", "get_issue"],
    "approve": ["create_issue"],
}


def load(value: Any) -> Settings:
    text = value if isinstance(value, str) else json.dumps(value)
    return load_settings(_env_file=None, **REQUIRED, MCP_SERVERS=text)


def stopped(value: Any) -> str:
    with pytest.raises(SettingsError) as error:
        load(value)
    message = str(error.value)
    assert "MCP_SERVERS" in message
    return message


def test_servers_are_read_with_their_secrets_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JIRA_TOKEN", "jira-s3cret")
    (server,) = load([JIRA]).mcp_servers
    assert server.name == "jira" and server.tools == ("search_issues", "get_issue")
    assert server.approve == ("create_issue",)
    assert server.header_values() == {"Authorization": "Bearer jira-s3cret"}
    assert "jira-s3cret" not in repr(server)  # a SecretStr


def test_a_variable_from_dot_env_fills_a_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JIRA_TOKEN", raising=False)
    (tmp_path / ".env").write_text(f"JIRA_TOKEN=from-dot-env\nMCP_SERVERS='{json.dumps([JIRA])}'\n")
    settings = load_settings(**REQUIRED)
    assert settings.mcp_servers[0].header_values()["Authorization"] == "Bearer from-dot-env"


def test_an_at_file_is_read_and_the_job_worker_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JIRA_TOKEN", "t")
    (tmp_path / "mcp.json").write_text(
        json.dumps([JIRA, {"name": "wiki", "url": "http://w/mcp", "tools": "read-only"}])
    )
    monkeypatch.chdir(tmp_path)
    settings = load("@mcp.json")
    assert [s.name for s in settings.mcp_servers] == ["jira", "wiki"]
    assert settings.mcp_servers[1].read_only
    passed = settings_environment(settings)["MCP_SERVERS"]
    assert passed == f"@{tmp_path / 'mcp.json'}"  # absolute: the worker may start elsewhere
    monkeypatch.chdir("/")
    again = load_settings(_env_file=None, **REQUIRED, MCP_SERVERS=passed)
    assert again.mcp_servers == settings.mcp_servers


def test_unset_or_empty_is_no_servers() -> None:
    assert load_settings(_env_file=None, **REQUIRED).mcp_servers == ()
    assert load("  ").mcp_servers == () and load("[]").mcp_servers == ()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("{not json", "is not JSON"),
        ({"name": "jira"}, "JSON array"),
        ([JIRA | {"name": "Jira Cloud"}], "lower-case"),
        ([JIRA | {"name": "my__jira"}], "no __"),
        ([JIRA | {"url": "file:///etc/passwd"}], "http:// or https://"),
        ([JIRA | {"tool": ["x"]}], "tool"),
        ([JIRA | {"tools": "readonly"}], '"read-only"'),
        ([JIRA | {"approve": ["get_issue"]}], "in both tools and approve"),
        ([JIRA, JIRA], "more than once"),
        ([JIRA | {"headers": {"Authorization": "Bearer ${NOT_SET_ANYWHERE}"}}], "NOT_SET_ANYWHERE"),
        ("@/no/such/file.json", "does not exist"),
    ],
)
def test_a_wrong_value_stops_start_up_naming_mcp_servers(
    value: Any, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JIRA_TOKEN", "t")
    assert says in stopped(value)


def test_a_secret_written_in_place_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "Bearer xoxp-written-in-place"
    message = stopped([JIRA | {"headers": {"Authorization": secret}, "url": "gopher://x"}])
    assert "written-in-place" not in message


@given(st.one_of(st.text(max_size=300), st.text(max_size=60).map(lambda t: "@" + t)))
def test_any_text_is_servers_or_a_clear_error(text: str) -> None:
    try:
        servers = parse_servers(text, environment={})
    except ValueError as error:
        assert str(error)
    else:
        assert all(server.name and server.url.startswith("http") for server in servers)
