"""What an event_callback asks for: its event (app.slack.envelope read it) as one of the
records of app.slack.events, or None for what tomo does not keep."""

from __future__ import annotations

import logging
from typing import Any

from app.slack.envelope import Envelope
from app.slack.events import (
    CHANNEL_GONE,
    CHANNEL_LEFT,
    WORKSPACE_GONE,
    AssistantOpened,
    ChannelGone,
    ChannelLeft,
    ChannelShared,
    MemberJoined,
    MemberLeft,
    MessageDeleted,
    MessageEdited,
    SlackEvent,
    WorkspaceGone,
    message_from_raw,
)
from app.slack.guards import shown, slack_id
from app.slack.kinds import TOMBSTONE
from app.slack.text import readable_text
from app.slack.timestamps import slack_ts

logger = logging.getLogger(__name__)


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_event(envelope: Envelope) -> SlackEvent | None:
    """The record an event_callback asks for, or None for events tomo does not keep."""
    event = envelope.event
    if event is None:
        return None
    kind = event.get("type")
    channel = event.get("channel")
    channel = channel if slack_id(channel) else ""
    team_id = envelope.team_id or event.get("team")
    team_id = team_id if slack_id(team_id) else ""
    if kind == "member_joined_channel" and channel and slack_id(event.get("user")):
        return MemberJoined(channel=channel, user_id=str(event["user"]))
    if kind == "member_left_channel" and channel and slack_id(event.get("user")):
        return MemberLeft(channel=channel, user_id=str(event["user"]))
    if kind in ("channel_shared", "channel_unshared") and channel:
        at = slack_ts(event.get("event_ts"))
        shared = kind == "channel_shared" or event.get("is_ext_shared") is True
        return ChannelShared(channel=channel, shared=shared, at=float(at) if at else 0.0)
    if kind in CHANNEL_GONE and channel:
        return ChannelGone(channel=channel)
    if kind in CHANNEL_LEFT and channel:
        return ChannelLeft(channel=channel)
    if kind in WORKSPACE_GONE:
        return _workspace_gone(event, kind, team_id, at=envelope.event_time)
    if kind in ("app_home_opened", "assistant_thread_started"):
        return _assistant_opened(event)
    if kind not in ("message", "app_mention"):
        return None
    if not channel:
        logger.warning(
            "rejected a %s: channel %s is not a Slack id", kind, shown(event.get("channel"))
        )
        return None
    subtype = event.get("subtype")
    if subtype == "message_changed":
        return _changed(event, channel)
    if subtype == "message_deleted":
        previous = event.get("previous_message")
        deleted_ts = slack_ts(event.get("deleted_ts")) or (
            slack_ts(previous.get("ts")) if isinstance(previous, dict) else None
        )
        return MessageDeleted(channel=channel, ts=deleted_ts) if deleted_ts else None
    return message_from_raw(
        event,
        channel=channel,
        team_id=team_id,
        channel_type=_string(event.get("channel_type")),
        app_mention=kind == "app_mention",
    )


def _workspace_gone(
    event: dict[str, Any], kind: str, team_id: str, *, at: float | None
) -> WorkspaceGone | None:
    """`app_uninstalled`, or `tokens_revoked` when bot tokens are among those revoked (a
    person's own token revoked leaves tomo's bot token working)."""
    moment = at
    if kind == "app_uninstalled":
        return WorkspaceGone(team_id=team_id, reason=kind, at=moment)
    tokens = event.get("tokens")
    bots = tokens.get("bot") if isinstance(tokens, dict) else None
    users = tuple(u for u in bots if slack_id(u)) if isinstance(bots, list) else ()
    if not users:
        return None
    return WorkspaceGone(team_id=team_id, reason=kind, bot_users=users, at=moment)


def _assistant_opened(event: dict[str, Any]) -> AssistantOpened | None:
    """`app_home_opened` on the messages tab (docs.slack.dev/reference/events/app_home_opened:
    `user`, `channel`, `tab`), or `assistant_thread_started` (its `assistant_thread`:
    `user_id`, `channel_id`, `thread_ts`; bolt-python's tests/scenario_tests/
    test_events_assistant.py)."""
    if event.get("type") == "app_home_opened":
        channel, user = event.get("channel"), event.get("user")
        if event.get("tab") != "messages" or not slack_id(channel) or not slack_id(user):
            return None
        return AssistantOpened(channel=channel, user_id=user)
    thread = event.get("assistant_thread")
    thread = thread if isinstance(thread, dict) else {}
    channel, user = thread.get("channel_id"), thread.get("user_id")
    thread_ts = slack_ts(thread.get("thread_ts"))
    if not slack_id(channel) or not slack_id(user) or thread_ts is None:
        return None
    return AssistantOpened(channel=channel, user_id=user, thread_ts=thread_ts)


def _edited_ts(message: dict[str, Any]) -> str | None:
    edited = message.get("edited")
    return _string(edited.get("ts")) if isinstance(edited, dict) else None


def _changed(event: dict[str, Any], channel: str) -> MessageEdited | MessageDeleted | None:
    """A `message_changed`: an edit only when it brings a new `edited` mark; a tombstone is
    the thread's parent deleted; anything else refreshes the content (a link unfurled)."""
    new, previous = event.get("message"), event.get("previous_message")
    new = new if isinstance(new, dict) else {}
    previous = previous if isinstance(previous, dict) else {}
    ts = slack_ts(new.get("ts")) or slack_ts(previous.get("ts"))
    if ts is None:
        logger.warning("rejected a message_changed of %s: message %s", channel, shown(new))
        return None
    if new.get("subtype") == TOMBSTONE:
        return MessageDeleted(channel=channel, ts=ts)
    edited = _edited_ts(new)
    if edited is not None and edited != _edited_ts(previous):
        edited_at = float(slack_ts(edited) or slack_ts(event.get("event_ts")) or ts)
        return MessageEdited(
            channel=channel, ts=ts, text=readable_text(new), edited=True, edited_at=edited_at
        )
    return MessageEdited(channel=channel, ts=ts, text=readable_text(new), edited=False)
