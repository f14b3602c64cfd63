"""Which tools a reply offers (app/tools/registry.py): the settings' names in their fixed order,
web_search only with a provider, none with MAX_TOOL_ROUNDS=0, a name this build has no class
for left out; definitions the same every time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.settings import Settings
from app.tools import registry
from app.tools.kit import Kit
from tests.tool_doubles import Broken, Lookup


def settings(**values: Any) -> Settings:
    base = {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-t"}
    return Settings(_env_file=None, **(base | values))  # type: ignore[call-arg]


def test_the_settings_choose_the_tools_in_their_fixed_order() -> None:
    every = registry.chosen(settings())
    # No search provider: no web_search. The notebook is two tools, note and forget_note.
    assert every == ("search_messages", "read_thread", "note", "forget_note", "fetch_url")
    with_search = registry.chosen(settings(WEB_SEARCH_PROVIDER="searxng"))
    assert with_search[-1] == "web_search" and len(with_search) == 6
    assert registry.chosen(settings(TOOLS="fetch_url,read_thread")) == ("read_thread", "fetch_url")
    assert registry.chosen(settings(MAX_TOOL_ROUNDS=0)) == ()
    assert registry.chosen(settings(TOOLS="")) == ()


def test_a_toolbox_has_the_registered_tools_and_the_same_definitions_every_time(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(registry.CLASSES, "read_thread", Broken)
    monkeypatch.setitem(registry.CLASSES, "search_messages", "tests.tool_doubles:Lookup")
    monkeypatch.delitem(registry.CLASSES, "note", raising=False)
    monkeypatch.delitem(registry.CLASSES, "forget_note", raising=False)
    kit = Kit(**dict.fromkeys(("engine", "slack", "identity", "llm", "scopes")), settings=None)  # type: ignore[arg-type]
    box = registry.Toolbox(settings(TOOLS="note,read_thread,search_messages"), kit)
    assert list(box.tools) == ["search_messages", "read_thread"]  # note: not in this build
    assert isinstance(box.get("search_messages"), Lookup) and box.get("note") is None
    assert "tool note is not available" in caplog.text
    assert "tool forget_note is not available" in caplog.text
    first = box.definitions()
    first[0]["function"]["name"] = "changed by a caller"
    assert json.dumps(box.definitions()) == json.dumps(
        registry.class_definitions(("search_messages", "read_thread"))
    )
    assert box.definitions()[0] == {
        "type": "function",
        "function": {
            "name": "search_messages",
            "description": Lookup.description,
            "parameters": Lookup.parameters,
        },
    }
