"""Slack payloads (Events API callbacks and Web API messages) turned into our records."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from app.domain import SharedFile
from app.slack.files import shared_files
from app.slack.guards import message_problem, shown, slack_id
from app.slack.kinds import TOMBSTONE, MessageKind, is_hidden, subtype_kind, subtype_of
from app.slack.text import readable_text
from app.slack.timestamps import slack_ts

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IncomingMessage:
    channel: str
    ts: str
    team_id: str
    thread_ts: str  # "" at the top level
    user_id: str | None
    bot_id: str | None
    text: str  # what a person sees of it (app.slack.text)
    subtype: str | None
    channel_type: str | None
    app_mention: bool = False
    files: tuple[SharedFile, ...] = ()

    @property
    def created_at(self) -> float:
        return float(self.ts)

    @property
    def kind(self) -> MessageKind:
        """Conversational or system (app.slack.kinds); a hidden message is never one of these."""
        return subtype_kind(self.subtype)

    @property
    def conversational(self) -> bool:
        return self.kind is MessageKind.CONVERSATIONAL

    @property
    def readable(self) -> bool:
        """Whether it shows anything to read: a message that shows nothing is no turn."""
        return bool(self.text.strip())


@dataclass(frozen=True)
class MessageEdited:
    """A changed message: a person's edit (`edited`), or Slack refreshing its content (a
    link unfurled, an attachment updated), which is neither an edit nor news for memories."""

    channel: str
    ts: str
    text: str
    edited: bool
    edited_at: float | None = None  # when edited


@dataclass(frozen=True)
class MessageDeleted:
    """A deleted message, or a thread's parent deleted while its replies stay (a tombstone)."""

    channel: str
    ts: str


@dataclass(frozen=True)
class MemberJoined:
    channel: str
    user_id: str


@dataclass(frozen=True)
class MemberLeft:
    """Someone left a channel (`member_left_channel`); when it is tomo, tomo was removed
    (Slack sends `channel_left` too, but "sometimes withholds" it)."""

    channel: str
    user_id: str


@dataclass(frozen=True)
class ChannelShared:
    """A channel shared with another organisation (`channel_shared`), or one of them removed
    from it (`channel_unshared`: `is_ext_shared` says whether others still read it). Shapes:
    docs.slack.dev/reference/events/channel_shared and /channel_unshared."""

    channel: str
    shared: bool
    at: float  # the event's time (event_ts)


@dataclass(frozen=True)
class ChannelGone:
    """A channel deleted in Slack (`channel_deleted`, `group_deleted`): everything tomo kept
    of it goes."""

    channel: str


@dataclass(frozen=True)
class ChannelLeft:
    """tomo removed from a channel (`channel_left`, `group_left`): nothing more of it is
    stored; what was kept goes with the retention."""

    channel: str


@dataclass(frozen=True)
class WorkspaceGone:
    """The app uninstalled (`app_uninstalled`) or its bot token revoked (`tokens_revoked`
    naming bot users): tomo stops and deletes everything it kept of the workspace."""

    team_id: str
    reason: str  # app_uninstalled, tokens_revoked
    bot_users: tuple[str, ...] = ()  # tokens_revoked: whose bot tokens
    at: float | None = None  # Slack's event_time: events delivered after it prove a reinstall


@dataclass(frozen=True)
class AssistantOpened:
    """A person opened tomo's messages tab (`app_home_opened` with `tab: messages`; no
    thread), or started a thread with it in Slack's older assistant view
    (`assistant_thread_started`, with its `thread_ts`): tomo offers its suggested prompts."""

    channel: str
    user_id: str
    thread_ts: str | None = None


SlackEvent = (
    IncomingMessage
    | AssistantOpened
    | MessageEdited
    | MessageDeleted
    | MemberJoined
    | MemberLeft
    | ChannelShared
    | ChannelGone
    | ChannelLeft
    | WorkspaceGone
)
CHANNEL_GONE = frozenset({"channel_deleted", "group_deleted"})
CHANNEL_LEFT = frozenset({"channel_left", "group_left"})
WORKSPACE_GONE = frozenset({"app_uninstalled", "tokens_revoked"})
# What says Slack took something away from tomo (the manifest subscribes to each).
REMOVALS = CHANNEL_GONE | CHANNEL_LEFT | WORKSPACE_GONE


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def message_from_raw(
    raw: dict[str, Any],
    *,
    channel: str,
    team_id: str = "",
    channel_type: str | None = None,
    app_mention: bool = False,
) -> IncomingMessage | None:
    """A message from an event or from conversations.history/replies; None if it has no ts
    or is no message to keep (hidden: `message_replied`, a tombstone)."""
    ts = raw.get("ts")
    if not ts or is_hidden(raw):
        return None
    problem = message_problem(raw)
    if problem is not None:
        logger.warning("rejected a message of %s: %s", channel, problem)
        return None
    thread_ts = str(raw.get("thread_ts") or "")
    return IncomingMessage(
        channel=channel,
        ts=ts,
        team_id=str(raw.get("team") or team_id or ""),
        thread_ts="" if thread_ts == ts else thread_ts,
        user_id=_string(raw.get("user")),
        bot_id=_string(raw.get("bot_id")),
        text=readable_text(raw),
        subtype=subtype_of(raw),
        channel_type=channel_type or _string(raw.get("channel_type")),
        app_mention=app_mention,
        files=shared_files(raw.get("files")),
    )


def history_message(raw: Any, *, channel: str) -> IncomingMessage | MessageDeleted | None:
    """One message of conversations.history or conversations.replies: a message to store, a
    deleted thread parent (its tombstone), or None for anything else."""
    if not isinstance(raw, dict):
        return None
    if raw.get("subtype") == TOMBSTONE:
        ts = slack_ts(raw.get("ts"))
        return MessageDeleted(channel=channel, ts=ts) if ts else None
    return message_from_raw(raw, channel=channel)


def bot_authorization(envelope: dict[str, Any]) -> tuple[str, str | None] | None:
    """(bot user id, team id) from an event_callback's `authorizations`: Slack names there the
    installation the event was delivered for, which for a bot token is tomo's own bot user."""
    authorizations = envelope.get("authorizations")
    if not isinstance(authorizations, list):
        return None
    for authorization in authorizations:
        if isinstance(authorization, dict) and authorization.get("is_bot"):
            user_id, team_id = authorization.get("user_id"), authorization.get("team_id")
            if isinstance(user_id, str) and user_id:
                return user_id, team_id if isinstance(team_id, str) else None
    return None


def parse_event(envelope: dict[str, Any]) -> SlackEvent | None:
    """The record an event_callback asks for, or None for events tomo does not keep."""
    event = envelope.get("event")
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    channel = event.get("channel")
    channel = channel if slack_id(channel) else ""
    team_id = envelope.get("team_id") or event.get("team")
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
        return _workspace_gone(event, kind, team_id, at=envelope.get("event_time"))
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


def slack_time(value: object) -> float | None:
    """An envelope's `event_time` (whole seconds), or None when it is not a usable one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def _workspace_gone(
    event: dict[str, Any], kind: str, team_id: str, *, at: object
) -> WorkspaceGone | None:
    """`app_uninstalled`, or `tokens_revoked` when bot tokens are among those revoked (a
    person's own token revoked leaves tomo's bot token working)."""
    moment = slack_time(at)
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
