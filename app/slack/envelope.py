"""An event_callback's envelope, read once into a typed value on the ack path, and whether it
was delivered for tomo's own installation (docs/how-tomo-works.md#ingress).

Events for another app (`api_app_id`) or another workspace are acknowledged and ignored. Who
the event is for is what its `authorizations` say (the installation Slack delivered it for):
the envelope's `team_id` alone is not enough, since in a channel shared with another
organisation it names the workspace the event happened in. Decided from the payload and what
tomo already knows of itself, with no call to Slack: this runs on the ack path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from app.slack.guards import shown, slack_id


class BadEnvelope(ValueError):
    """An envelope tomo rejects (acknowledged, so Slack stops): the reason, for the log."""


@dataclass(frozen=True, slots=True)
class Installation:
    """Who tomo is in Slack, as far as it knows (None: not known yet)."""

    bot_user_id: str | None
    team_id: str | None
    enterprise_id: str | None = None
    app_id: str | None = None


@dataclass(frozen=True, slots=True)
class Authorization:
    """One of `authorizations`: an installation Slack delivered the event for."""

    user_id: str | None
    team_id: str | None
    enterprise_id: str | None
    is_bot: bool
    is_enterprise_install: bool


@dataclass(frozen=True, slots=True)
class Envelope:
    """What tomo reads of an event_callback's envelope; `event`: its event, for
    app.slack.callbacks. Strings are None where the payload has no string."""

    event_id: str | None
    api_app_id: str | None
    team_id: str | None
    enterprise_id: str | None
    is_ext_shared_channel: bool
    event_time: float | None  # `event_time`, when it is a usable one
    authorized: bool  # `authorizations` is a list with something in it
    authorizations: tuple[Authorization, ...]  # its objects
    event: dict[str, Any] | None

    def bot(self) -> tuple[str, str | None] | None:
        """(bot user id, team id) of the first bot authorization: Slack names there the
        installation the event was delivered for, which for a bot token is tomo's own bot."""
        for entry in self.authorizations:
            if entry.is_bot and entry.user_id:
                return entry.user_id, entry.team_id
        return None


def _string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def slack_time(value: object) -> float | None:
    """An envelope's `event_time` (whole seconds), or None when it is not a usable one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


def _authorization(entry: dict[str, Any]) -> Authorization:
    return Authorization(
        user_id=_string(entry.get("user_id")),
        team_id=_string(entry.get("team_id")),
        enterprise_id=_string(entry.get("enterprise_id")),
        is_bot=entry.get("is_bot") is True,
        is_enterprise_install=entry.get("is_enterprise_install") is True,
    )


def read_envelope(payload: dict[str, Any]) -> Envelope:
    """The envelope of an event_callback; BadEnvelope for an `event_id` that is no Slack id."""
    event_id = payload.get("event_id") or None
    if event_id is not None and not slack_id(event_id):
        raise BadEnvelope(f"event_id {shown(event_id)} is not a Slack id")
    authorizations = payload.get("authorizations")
    listed = authorizations if isinstance(authorizations, list) else []
    event = payload.get("event")
    return Envelope(
        event_id=event_id,
        api_app_id=_string(payload.get("api_app_id")) or None,
        team_id=_string(payload.get("team_id")) or None,
        enterprise_id=_string(payload.get("enterprise_id")),
        is_ext_shared_channel=payload.get("is_ext_shared_channel") is True,
        event_time=slack_time(payload.get("event_time")),
        authorized=bool(listed),
        authorizations=tuple(_authorization(a) for a in listed if isinstance(a, dict)),
        event=event if isinstance(event, dict) else None,
    )


def foreign_reason(envelope: Envelope, me: Installation) -> str | None:
    """Why this event is not for tomo's installation, or None when it is (or cannot be told)."""
    app_id = envelope.api_app_id
    if me.app_id and app_id and app_id != me.app_id:
        return f"another app ({app_id})"
    if envelope.authorized:
        entries = envelope.authorizations
        if entries and (me.bot_user_id or me.team_id):
            # The usual case first: delivered for tomo's own bot user.
            if not any(_names_me(entry, me) for entry in entries):
                return f"another installation ({_where(entries[0])})"
        return None
    team_id = envelope.team_id
    if (
        me.team_id
        and team_id
        and team_id != me.team_id
        and not (me.enterprise_id and envelope.enterprise_id == me.enterprise_id)
        and not envelope.is_ext_shared_channel
    ):
        return f"another workspace ({team_id})"
    return None


def install_proof(envelope: Envelope, *, bot_user_id: str | None) -> tuple[float, str] | None:
    """When, and for which workspace, Slack delivered this event to tomo's bot user (its
    `event_time` and the authorization's `team_id`), or None. Slack delivers events only to
    an installed app: such an event shows tomo was installed at that moment, which is what
    lifts an uninstall (app.db.erasure). A late retry carries its first delivery's time."""
    if not bot_user_id or envelope.event_time is None:
        return None
    for entry in envelope.authorizations:
        if entry.is_bot and entry.user_id == bot_user_id:
            return envelope.event_time, entry.team_id or ""
    return None


def _names_me(entry: Authorization, me: Installation) -> bool:
    if me.bot_user_id and entry.user_id == me.bot_user_id:
        return True
    if me.team_id and entry.team_id == me.team_id:
        return True
    return bool(
        me.enterprise_id and entry.is_enterprise_install and entry.enterprise_id == me.enterprise_id
    )


def _where(entry: Authorization) -> str:
    return entry.team_id or entry.enterprise_id or entry.user_id or "?"
