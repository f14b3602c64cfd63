"""slack-manifest.yml declares tomo as an AI app in Slack's current form (agent view, the
interactivity URL of the feedback buttons, the scopes and events those need) and is valid
against Slack's published manifest schema (tests/fixtures/manifest_schema/README.md)."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import yaml

from app.assistant.words import suggested
from app.db.migrate import PROJECT_ROOT
from app.routes.interactions import PATH as INTERACTIONS

SCHEMA = PROJECT_ROOT / "tests" / "fixtures" / "manifest_schema" / "manifest.schema.1.0.0.json"


def manifest() -> dict[str, Any]:
    loaded = yaml.safe_load((PROJECT_ROOT / "slack-manifest.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def errors(document: dict[str, Any]) -> list[str]:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return [error.message for error in jsonschema.Draft7Validator(schema).iter_errors(document)]


def test_the_manifest_is_valid_against_slacks_schema() -> None:
    assert errors(manifest()) == []


def test_the_schema_would_refuse_a_wrong_agent_view() -> None:
    wrong = copy.deepcopy(manifest())
    prompts = wrong["features"]["agent_view"]["suggested_prompts"]
    prompts.append(prompts[0])  # five: Slack shows at most four
    assert errors(wrong)
    unknown = copy.deepcopy(manifest())
    unknown["features"]["agent_view"]["assistant_description"] = "the older view's key"
    assert errors(unknown)
    no_url = copy.deepcopy(manifest())
    no_url["settings"]["interactivity"]["request_url"] = "YOUR-HOST/slack/interactions"
    assert errors(no_url)


def test_the_manifest_declares_the_ai_app_and_its_interactivity() -> None:
    found = manifest()
    agent = found["features"]["agent_view"]
    assert agent["agent_description"].strip()
    assert found["features"]["app_home"]["messages_tab_enabled"] is True
    interactivity = found["settings"]["interactivity"]
    assert interactivity["is_enabled"] is True
    assert interactivity["request_url"].endswith(INTERACTIONS)
    scopes = set(found["oauth_config"]["scopes"]["bot"])
    assert {"assistant:write", "im:history", "chat:write", "users:read"} <= scopes
    events = set(found["settings"]["event_subscriptions"]["bot_events"])
    assert {
        "app_home_opened",
        "assistant_thread_started",
        "assistant_thread_context_changed",
        "message.im",
    } <= events


def test_the_manifest_offers_the_english_prompts_tomo_sets() -> None:
    _, prompts = suggested("en")
    assert manifest()["features"]["agent_view"]["suggested_prompts"] == prompts
    _, japanese = suggested("ja")
    assert len(japanese) == len(prompts) <= 4 and japanese != prompts
