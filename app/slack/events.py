"""Slack payloads (Events API callbacks and Web API messages) turned into our records: what an
event asks for (read by app.slack.callbacks), a message of an event or of the Web API."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.domain import SharedFile
from app.slack.files import shared_files
from app.slack.guards import message_problem
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
