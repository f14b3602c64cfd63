"""Reading an event_callback: who it was delivered for, and what it asks to be recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.slack.callbacks import parse_event
from app.slack.envelope import read_envelope
from app.slack.events import (
    ChannelGone,
    ChannelLeft,
    IncomingMessage,
    MemberLeft,
    MessageDeleted,
    MessageEdited,
    SlackEvent,
    WorkspaceGone,
    history_message,
)
from app.slack.kinds import MessageKind


def parse(payload: dict[str, Any]) -> SlackEvent | None:
    return parse_event(read_envelope(payload))


def bot_of(payload: dict[str, Any]) -> tuple[str, str | None] | None:
    return read_envelope(payload).bot()


def test_the_bot_installation_names_tomos_user() -> None:
    envelope = {
        "authorizations": [
            {"user_id": "U_PERSON", "team_id": "T1", "is_bot": False},
            {"user_id": "UBOT", "team_id": "T1", "is_bot": True},
        ]
    }
    assert bot_of(envelope) == ("UBOT", "T1")


@pytest.mark.parametrize(
    "authorizations",
    [None, "UBOT", [], ["UBOT"], [{"user_id": "UBOT"}], [{"is_bot": True, "user_id": 7}]],
)
def test_anything_else_names_nobody(authorizations: Any) -> None:
    assert bot_of({"authorizations": authorizations}) is None


# What an event asks for: a message to store, an edit, a refresh, a deletion, or nothing.

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slack"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())  # type: ignore[no-any-return]


def test_an_edit_carries_the_new_text_and_when_it_was_edited() -> None:
    # Bolt's shape: the changed message has no ts of its own, the previous one has.
    change = parse(fixture("message_changed_edit"))
    assert change == MessageEdited(
        channel="C1",
        ts="1700000100.000100",
        text="Does anyone know why the prod deploy is stuck?",
        edited=True,
        edited_at=1700000105.0,
    )


def test_an_unfurl_refreshes_the_text_and_is_no_edit() -> None:
    change = parse(fixture("message_changed_unfurl"))
    assert isinstance(change, MessageEdited)
    assert change.edited is False and change.edited_at is None
    assert "> the release is moved to Friday" in change.text


def test_an_unfurl_after_an_edit_is_no_new_edit() -> None:
    envelope = fixture("message_changed_edit")
    event = envelope["event"]
    event["previous_message"]["edited"] = dict(event["message"]["edited"])
    event["message"]["attachments"] = [{"title": "a preview", "from_url": "https://a.example"}]
    change = parse(envelope)
    assert isinstance(change, MessageEdited) and change.edited is False
    assert change.text.endswith("\na preview")


def test_a_tombstone_deletes_the_threads_parent() -> None:
    for name in ("message_changed_tombstone", "message_deleted_tombstone", "message_deleted"):
        assert parse(fixture(name)) == MessageDeleted(channel="C1", ts="1700000100.000100")


def test_hidden_events_and_other_event_types_ask_for_nothing() -> None:
    for name in ("message_replied", "app_home_opened", "member_joined_channel_person"):
        event = parse(fixture(name))
        assert event is None or not isinstance(event, IncomingMessage)


def test_system_messages_are_messages_of_the_system_kind() -> None:
    join = parse(fixture("system_channel_join"))
    assert isinstance(join, IncomingMessage)
    assert (join.kind, join.conversational) == (MessageKind.SYSTEM, False)
    plain = parse(fixture("message_plain"))
    assert isinstance(plain, IncomingMessage) and plain.kind is MessageKind.CONVERSATIONAL


def test_a_kind_follows_the_subtype_however_a_message_is_built() -> None:
    message = IncomingMessage(
        channel="C1",
        ts="1.0",
        team_id="",
        thread_ts="",
        user_id="U1",
        bot_id=None,
        text="<@U1> has joined the channel",
        subtype="channel_join",
        channel_type=None,
    )
    assert message.kind is MessageKind.SYSTEM


def test_history_reads_a_tombstone_as_a_deleted_parent() -> None:
    tombstone = fixture("message_changed_tombstone")["event"]["message"]
    assert history_message(tombstone, channel="C1") == MessageDeleted("C1", "1700000100.000100")
    assert history_message("not a message", channel="C1") is None
    reply = history_message(fixture("message_thread_reply")["event"], channel="C1")
    assert isinstance(reply, IncomingMessage) and reply.thread_ts == "1700000100.000100"


def test_every_fixture_parses_without_error() -> None:
    for path in FIXTURES.glob("*.json"):
        parse(json.loads(path.read_text()))


# What Slack took away (docs/data-and-privacy.md), read from the fixtures' shapes.
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slack"


def _fixture(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / f"{name}.json").read_text())
    assert isinstance(body, dict)
    return body


def test_channels_deleted_and_left_and_the_workspace_gone_are_read() -> None:
    assert parse(_fixture("channel_deleted")) == ChannelGone("C1")
    assert parse(_fixture("group_deleted")) == ChannelGone("C1")
    assert parse(_fixture("channel_left")) == ChannelLeft("C1")
    assert parse(_fixture("group_left")) == ChannelLeft("C1")
    # Whose leaving it is, the intake tells (tomo's own is a ChannelLeft there).
    assert parse(_fixture("member_left_channel_tomo")) == MemberLeft("C1", "UBOT")
    assert parse(_fixture("member_left_channel_person")) == MemberLeft("C1", "U2")
    # With Slack's event_time: an event delivered after it proves a reinstall.
    assert parse(_fixture("app_uninstalled")) == WorkspaceGone(
        "T0001", "app_uninstalled", at=1700000204.0
    )
    assert parse(_fixture("tokens_revoked")) == WorkspaceGone(
        "T0001", "tokens_revoked", bot_users=("UBOT",), at=1700000205.0
    )


@pytest.mark.parametrize(
    "tokens", [{"oauth": ["U1"]}, {"oauth": ["U1"], "bot": []}, {"bot": "UBOT"}, None, []]
)
def test_a_persons_token_revoked_leaves_the_workspace_alone(tokens: Any) -> None:
    envelope = _fixture("tokens_revoked")
    envelope["event"]["tokens"] = tokens
    assert parse(envelope) is None


@pytest.mark.parametrize("channel", [None, "", 7, "not an id", {"id": "C1"}])
def test_a_channel_event_without_a_channel_id_asks_for_nothing(channel: Any) -> None:
    envelope = _fixture("channel_deleted")
    envelope["event"]["channel"] = channel
    assert parse(envelope) is None
