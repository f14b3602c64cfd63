"""Slack payloads (Events API callbacks and Web API messages) turned into our records."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.slack.guards import message_problem, shown, slack_id
from app.slack.timestamps import slack_ts

logger = logging.getLogger(__name__)

# Subtypes that are people talking; every other subtype is recorded but triggers nothing.
CONVERSATIONAL_SUBTYPES = frozenset({None, "file_share", "thread_broadcast", "me_message"})
BOT_SUBTYPES = frozenset({"bot_message"})


@dataclass(frozen=True)
class IncomingMessage:
    channel: str
    ts: str
    team_id: str
    thread_ts: str  # "" at the top level
    user_id: str | None
    bot_id: str | None
    text: str
    subtype: str | None
    channel_type: str | None
    app_mention: bool = False

    @property
    def created_at(self) -> float:
        return float(self.ts)

    @property
    def conversational(self) -> bool:
        return self.subtype in CONVERSATIONAL_SUBTYPES


@dataclass(frozen=True)
class MessageEdited:
    channel: str
    ts: str
    text: str
    edited_at: float


@dataclass(frozen=True)
class MessageDeleted:
    channel: str
    ts: str


@dataclass(frozen=True)
class MemberJoined:
    channel: str
    user_id: str


SlackEvent = IncomingMessage | MessageEdited | MessageDeleted | MemberJoined


def message_text(raw: dict[str, Any]) -> str:
    """The message text, with shared files named so a prompt knows they are there."""
    text = raw.get("text")
    text = text if isinstance(text, str) else ""
    files = raw.get("files")
    names = [
        next((n for n in (f.get("name"), f.get("title")) if isinstance(n, str) and n), "file")
        for f in (files if isinstance(files, list) else ())
        if isinstance(f, dict)
    ]
    if names:
        text = (text + "\n" if text else "") + " ".join(f"[file: {n}]" for n in names)
    return text


def message_from_raw(
    raw: dict[str, Any],
    *,
    channel: str,
    team_id: str = "",
    channel_type: str | None = None,
    app_mention: bool = False,
) -> IncomingMessage | None:
    """A message from an event or from conversations.history/replies; None if it has no ts."""
    ts = raw.get("ts")
    if not ts:
        return None
    problem = message_problem(raw)
    if problem is not None:
        logger.warning("rejected a message of %s: %s", channel, problem)
        return None
    thread_ts = str(raw.get("thread_ts") or "")
    return IncomingMessage(
        channel=channel,
        ts=str(ts),
        team_id=str(raw.get("team") or team_id or ""),
        thread_ts="" if thread_ts == str(ts) else thread_ts,
        user_id=raw.get("user"),
        bot_id=raw.get("bot_id"),
        text=message_text(raw),
        subtype=raw.get("subtype"),
        channel_type=channel_type or raw.get("channel_type"),
        app_mention=app_mention,
    )


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
    if kind not in ("message", "app_mention"):
        return None
    if not channel:
        logger.warning(
            "rejected a %s: channel %s is not a Slack id", kind, shown(event.get("channel"))
        )
        return None
    subtype = event.get("subtype")
    if subtype == "message_changed":
        new = event.get("message")
        if not isinstance(new, dict) or slack_ts(new.get("ts")) is None:
            logger.warning("rejected a message_changed of %s: message %s", channel, shown(new))
            return None
        edited = new.get("edited")
        edited_ts = slack_ts(edited.get("ts")) if isinstance(edited, dict) else None
        edited_at = edited_ts or slack_ts(event.get("event_ts")) or new["ts"]
        return MessageEdited(
            channel=channel, ts=new["ts"], text=message_text(new), edited_at=float(edited_at)
        )
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
        channel_type=event.get("channel_type"),
        app_mention=kind == "app_mention",
    )
