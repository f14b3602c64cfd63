"""Whether an event_callback was delivered for tomo's own installation (docs/how-tomo-
works.md#ingress).

Events for another app (`api_app_id`) or another workspace are acknowledged and ignored. Who
the event is for is what its `authorizations` say (the installation Slack delivered it for):
the envelope's `team_id` alone is not enough, since in a channel shared with another
organisation it names the workspace the event happened in. Decided from the payload and what
tomo already knows of itself, with no call to Slack: this runs on the ack path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.slack.events import slack_time


@dataclass(frozen=True)
class Installation:
    """Who tomo is in Slack, as far as it knows (None: not known yet)."""

    bot_user_id: str | None
    team_id: str | None
    enterprise_id: str | None = None
    app_id: str | None = None


def foreign_reason(envelope: dict[str, Any], me: Installation) -> str | None:
    """Why this event is not for tomo's installation, or None when it is (or cannot be told)."""
    app_id = envelope.get("api_app_id")
    if me.app_id and isinstance(app_id, str) and app_id and app_id != me.app_id:
        return f"another app ({app_id})"
    authorizations = envelope.get("authorizations")
    if isinstance(authorizations, list) and authorizations:
        first = authorizations[0]
        if me.bot_user_id and isinstance(first, dict) and first.get("user_id") == me.bot_user_id:
            return None  # the usual case: delivered for tomo's own bot user
        entries = [a for a in authorizations if isinstance(a, dict)]
        if entries and (me.bot_user_id or me.team_id):
            if not any(_names_me(entry, me) for entry in entries):
                return f"another installation ({_where(entries[0])})"
        return None
    team_id = envelope.get("team_id")
    if (
        me.team_id
        and isinstance(team_id, str)
        and team_id
        and team_id != me.team_id
        and not (me.enterprise_id and envelope.get("enterprise_id") == me.enterprise_id)
        and envelope.get("is_ext_shared_channel") is not True
    ):
        return f"another workspace ({team_id})"
    return None


def install_proof(envelope: dict[str, Any], *, bot_user_id: str | None) -> tuple[float, str] | None:
    """When, and for which workspace, Slack delivered this event to tomo's bot user (its
    `event_time` and the authorization's `team_id`), or None. Slack delivers events only to
    an installed app: such an event shows tomo was installed at that moment, which is what
    lifts an uninstall (app.db.erasure). A late retry carries its first delivery's time."""
    event_time = slack_time(envelope.get("event_time"))
    authorizations = envelope.get("authorizations")
    if not bot_user_id or event_time is None or not isinstance(authorizations, list):
        return None
    for entry in authorizations:
        if (
            isinstance(entry, dict)
            and entry.get("is_bot") is True
            and entry.get("user_id") == bot_user_id
        ):
            team_id = entry.get("team_id")
            return event_time, team_id if isinstance(team_id, str) else ""
    return None


def _names_me(entry: dict[str, Any], me: Installation) -> bool:
    if me.bot_user_id and entry.get("user_id") == me.bot_user_id:
        return True
    if me.team_id and entry.get("team_id") == me.team_id:
        return True
    return bool(
        me.enterprise_id
        and entry.get("is_enterprise_install") is True
        and entry.get("enterprise_id") == me.enterprise_id
    )


def _where(entry: dict[str, Any]) -> str:
    return str(entry.get("team_id") or entry.get("enterprise_id") or entry.get("user_id") or "?")
