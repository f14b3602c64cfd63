"""What the recorder is handed and answers: a delivery (an event id and the change it carries),
its outcome, and the row a new message is stored as."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from app.db.conversation_facts import MembershipChanged
from app.db.erasure import ErasureChange, Installed
from app.domain import Route
from app.slack.events import ChannelShared, IncomingMessage, MessageDeleted, MessageEdited
from app.slack.files import files_json


@dataclass(frozen=True)
class NewMessage:
    message: IncomingMessage
    route: Route


Change = (
    NewMessage
    | MessageEdited
    | MessageDeleted
    | ErasureChange
    | ChannelShared
    | MembershipChanged
    | None
)


@dataclass(frozen=True)
class Outcome:
    duplicate: bool  # the event id was seen before: nothing was done
    applied: bool  # the change took effect (a new message was stored, an edit applied)
    rejected: bool = False  # the database refused its values: nothing was stored
    route: Route | None = None  # a new message stored with another route than it came with
    deferred: bool = False  # proves a reinstall while the deletion runs: Slack delivers it again
    lifted: bool = False  # it proved a reinstall: the workspace is tomo's again


# The routes of new messages that the database tells apart (a follow-up: tomo takes part in
# the conversation), by (channel, ts); read in the recording's transaction, before they are
# stored (app.conversation.timing.participation).
Reroute = Callable[[Connection, Sequence[NewMessage], float], dict[tuple[str, str], Route]]


@dataclass(frozen=True)
class Delivery:
    event_id: str | None
    change: Change
    installed: Installed | None = None  # delivered to tomo's bot user (proves the install)


# The four outcomes there are, built once.
APPLIED = Outcome(duplicate=False, applied=True)
NOT_APPLIED = Outcome(duplicate=False, applied=False)
DUPLICATE = Outcome(duplicate=True, applied=False)
REJECTED = Outcome(duplicate=False, applied=False, rejected=True)
DEFERRED = Outcome(duplicate=False, applied=False, deferred=True)


def reply_reason(route: Route) -> str | None:
    return route.reason.value if route.reason is not None else None


def message_row(message: IncomingMessage, route: Route) -> dict[str, Any]:
    return {
        "channel": message.channel,
        "ts": message.ts,
        "team_id": message.team_id,
        "thread_ts": message.thread_ts,
        "conversation_ts": route.conversation_ts,
        "route": route.kind.value,
        "reply_reason": reply_reason(route),
        "user_id": message.user_id,
        "bot_id": message.bot_id,
        "text": message.text,
        "subtype": message.subtype,
        "kind": message.kind.value,
        "channel_type": message.channel_type,
        "created_at": message.created_at,
        "edited_at": None,
        "deleted": False,
        "files": files_json(message.files),
    }
