"""What kind of message a Slack message is, and whether a person wrote it."""

from __future__ import annotations

from typing import Any

import pytest

from app.slack.kinds import MessageKind, is_person, message_kind


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ({"text": "hi"}, MessageKind.CONVERSATIONAL),
        ({"subtype": "thread_broadcast"}, MessageKind.CONVERSATIONAL),
        ({"subtype": "file_share"}, MessageKind.CONVERSATIONAL),
        ({"subtype": "me_message"}, MessageKind.CONVERSATIONAL),
        ({"subtype": "bot_message"}, MessageKind.CONVERSATIONAL),
        ({"subtype": "channel_join"}, MessageKind.SYSTEM),
        ({"subtype": "channel_topic"}, MessageKind.SYSTEM),
        ({"subtype": "pinned_item"}, MessageKind.SYSTEM),
        ({"subtype": "huddle_thread"}, MessageKind.SYSTEM),
        ({"subtype": "reminder_add"}, MessageKind.SYSTEM),
        ({"subtype": "a_subtype_slack_adds_later"}, MessageKind.SYSTEM),
        ({"subtype": ["not", "a", "string"]}, MessageKind.SYSTEM),
        ({"subtype": "message_replied", "hidden": True}, MessageKind.HIDDEN),
        ({"subtype": "tombstone", "user": "USLACKBOT"}, MessageKind.HIDDEN),
        ({"text": "hi", "hidden": True}, MessageKind.HIDDEN),
    ],
)
def test_kinds(raw: dict[str, Any], kind: MessageKind) -> None:
    assert message_kind(raw) is kind


def test_people_and_not_people() -> None:
    assert is_person(user_id="U1", bot_id=None, subtype=None)
    assert not is_person(user_id="U1", bot_id="B1", subtype=None)  # an app's bot user
    assert not is_person(user_id=None, bot_id="B1", subtype="bot_message")
    assert not is_person(user_id="U1", bot_id=None, subtype="bot_message")
    assert not is_person(user_id=None, bot_id=None, subtype=None)
    assert not is_person(user_id="USLACKBOT", bot_id=None, subtype=None)
    # A legacy bot user: only users.info tells (is_bot), no bot_id in its messages.
    assert not is_person(user_id="U7", bot_id=None, subtype=None, bot_users={"U7"})
