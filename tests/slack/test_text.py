"""A message's readable text: what a person in the channel sees of it (docs/how-tomo-
works.md#recording)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.slack.text import readable_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slack"


def event(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / f"{name}.json").read_text())
    return body["event"]


def rich(*elements: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "rich_text", "elements": list(elements)}]


def section(*elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "rich_text_section", "elements": list(elements)}


def test_text_is_what_is_read_first() -> None:
    assert readable_text(event("message_plain")) == (
        "Does anyone know why the staging deploy is stuck?"
    )


def test_without_text_the_rich_text_blocks_are_read_in_slacks_own_notation() -> None:
    blocks = rich(
        section(
            {"type": "text", "text": "hi "},
            {"type": "user", "user_id": "U1"},
            {"type": "text", "text": " see "},
            {"type": "channel", "channel_id": "C2"},
            {"type": "text", "text": " "},
            {"type": "link", "url": "https://a.example", "text": "this"},
            {"type": "text", "text": " "},
            {"type": "emoji", "name": "tada", "unicode": "1f389"},
            {"type": "text", "text": " "},
            {"type": "broadcast", "range": "here"},
            {"type": "usergroup", "usergroup_id": "S1"},
        ),
        {
            "type": "rich_text_list",
            "style": "ordered",
            "elements": [
                section({"type": "text", "text": "one"}),
                section({"type": "text", "text": "two"}),
            ],
        },
    )
    assert readable_text({"text": "", "blocks": blocks}) == (
        "hi <@U1> see <#C2> <https://a.example|this> :tada: <!here><!subteam^S1>\n1. one\n2. two"
    )


def test_lists_quotes_and_code_blocks_of_a_blocks_only_message() -> None:
    text = readable_text(event("message_rich_text_blocks_only"))
    assert text == (
        "• [a message in <#C2>]\n• <https://example.com/runbook>\n"
        "> the runner keeps failing on step 3\n"
        "```\nNo space left on device\n<https://example.com/logs/42>\n```"
    )


def test_an_apps_header_and_section_blocks() -> None:
    text = readable_text(event("bot_message_circleci_blocks"))
    assert text == (
        "Job Failed. :red_circle:\n*Job*: deploy-staging\n*Project*: deployer\n*Branch*: main"
    )


def test_an_integrations_attachment_pretext_title_text_and_fields() -> None:
    assert readable_text(event("bot_message_legacy_attachments")) == (
        "Build notification\n<https://ci.example.com/job/deployer/128/|deployer #128>\n"
        "Build failed after 3 min\nBranch: main\nStage: deploy"
    )
    github = readable_text(event("bot_message_github"))
    assert github.startswith("Issue created by <https://github.com/alice|alice>\n")
    assert "[acme/deployer] Issue opened by alice" not in github  # the fallback is not repeated


def test_the_fallback_when_an_attachment_has_nothing_else() -> None:
    attachment = {"fallback": "Build #7 passed", "color": "good"}
    assert readable_text({"text": "", "attachments": [attachment]}) == "Build #7 passed"


def test_a_forward_is_the_shared_message_quoted_under_its_author() -> None:
    assert readable_text(event("message_forwarded")) == (
        "[shared message from <@U2> (Bob)]\n> the release is moved to Friday"
    )
    assert readable_text(event("message_shared_with_comment_dm")) == (
        "what do you make of this?\n"
        "[shared message from <@U2> (Bob)]\n> the release is moved to Friday"
    )


def test_a_shared_message_read_from_its_blocks_with_its_files() -> None:
    attachment = {
        "is_share": True,
        "author_id": "U2",
        "message_blocks": [
            {"message": {"blocks": rich(section({"type": "text", "text": "line 1\nline 2"}))}}
        ],
        "files": [{"name": "plan.pdf"}],
    }
    assert readable_text({"text": "", "attachments": [attachment]}) == (
        "[shared message from <@U2>]\n> line 1\n> line 2\n> [file: plan.pdf]"
    )


def test_files_are_named_and_a_file_without_a_name_is_still_there() -> None:
    assert readable_text(event("message_file_share")) == (
        "Here is the error screen\n[file: deploy-error.png]"
    )
    assert readable_text(event("message_file_share_connect_dm")) == (
        "can you read this log?\n[file: file]"
    )
    assert readable_text(event("message_email_slackbot")) == "[file: Weekly report]"


def test_a_huddle_post_shows_nothing_to_read() -> None:
    assert readable_text(event("system_huddle_thread")) == ""


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "text",
                    "blocks",
                    "attachments",
                    "files",
                    "type",
                    "elements",
                    "message_blocks",
                    "message",
                    "is_share",
                    "fields",
                    "title",
                    "name",
                    "style",
                    "url",
                    "user_id",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)


# Generation is slow on a busy two-core machine; the property is about the parser, not that.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["text", "blocks", "attachments", "files"]), JSON))
def test_any_shape_gives_a_string_and_never_an_error(raw: dict[str, Any]) -> None:
    assert isinstance(readable_text(raw), str)
