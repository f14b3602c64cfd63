"""The objects the Slack stand-in answers with, in the shapes of Slack's published examples.

Sources: the example responses of users.info, conversations.info, bots.info,
conversations.replies and conversations.history in Slack's Web API reference
(docs.slack.dev/reference/methods/...), the user, bot user and Slackbot objects in its
"User object" reference, and captured payloads in public test suites
(MercuryTechnologies/slack-web tests/golden, hackclub/toriel's tombstone). Ids, names and
times are ours.
"""

from __future__ import annotations

from typing import Any

SLACKBOT = "USLACKBOT"
CREATED = 1449252889  # the docs' example time; nothing reads it


def profile(*, real_name: str, display_name: str, team: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": "",
        "phone": "",
        "skype": "",
        "real_name": real_name,
        "real_name_normalized": real_name,
        "display_name": display_name,
        "display_name_normalized": display_name,
        "fields": None,
        "status_text": "",
        "status_emoji": "",
        "status_expiration": 0,
        "avatar_hash": "g0a1b2c3d4e5",
        "first_name": real_name.split(" ")[0] if real_name else "",
        "last_name": " ".join(real_name.split(" ")[1:]),
        "image_48": "https://secure.gravatar.com/avatar/0a1b2c3d4e5.jpg?s=48",
        "team": team,
        **extra,
    }


def user(
    id: str,
    *,
    team_id: str,
    name: str,
    display_name: str = "",
    real_name: str = "",
    is_bot: bool = False,
    bot_id: str | None = None,
    app_id: str | None = None,
    deleted: bool = False,
    guest: str | None = None,
    enterprise_id: str | None = None,
) -> dict[str, Any]:
    """A users.info `user`: a person, a bot user (with its bot_id and app in the profile;
    a legacy bot user has none), or a deactivated account (`deleted`, fewer fields).
    `guest`: "multi" (is_restricted) or "single" (is_ultra_restricted as well, as Slack's
    User object reference describes a single-channel guest). `enterprise_id`: a member of an
    Enterprise organisation (its `enterprise_user`). A person of another organisation has
    that organisation's `team_id` (Slack Connect: docs.slack.dev/apis/slack-connect)."""
    extra: dict[str, Any] = {}
    if is_bot:
        extra = {"always_active": False}
        extra |= {"bot_id": bot_id} if bot_id else {}
        extra |= {"api_app_id": app_id} if app_id else {}
    shown = profile(real_name=real_name, display_name=display_name, team=team_id, **extra)
    if deleted:
        return {
            "id": id,
            "team_id": team_id,
            "name": name,
            "deleted": True,
            "profile": shown,
            "is_bot": is_bot,
            "is_app_user": False,
            "updated": CREATED,
        }
    return {
        "id": id,
        "team_id": team_id,
        "name": name,
        "deleted": False,
        "color": "9f69e7",
        "real_name": real_name,
        "tz": "Asia/Tokyo",
        "tz_label": "Japan Standard Time",
        "tz_offset": 32400,
        "profile": shown,
        "is_admin": False,
        "is_owner": False,
        "is_primary_owner": False,
        "is_restricted": guest is not None,
        "is_ultra_restricted": guest == "single",
        "is_bot": is_bot,
        "is_app_user": False,
        "updated": CREATED,
    } | (_enterprise(enterprise_id, team_id) if enterprise_id else {})


def _enterprise(enterprise_id: str, team_id: str) -> dict[str, Any]:
    """A member of an Enterprise organisation, as users.info shows one (its `enterprise_user`)."""
    user = {"id": "W0", "enterprise_id": enterprise_id, "enterprise_name": "Fake Org"}
    user |= {"is_admin": False, "is_owner": False, "is_primary_owner": False, "teams": [team_id]}
    return {"enterprise_user": user}


def slackbot(team_id: str) -> dict[str, Any]:
    """Slackbot as users.info gives it: `is_bot` false, yet no person."""
    shown = profile(real_name="Slackbot", display_name="Slackbot", team=team_id)
    shown |= {"always_active": True, "first_name": "slackbot"}
    return user(SLACKBOT, team_id=team_id, name="slackbot", real_name="Slackbot") | {
        "color": "757575",
        "tz": None,
        "profile": shown,
        "updated": 0,
    }


def bot(id: str, *, name: str, app_id: str, user_id: str | None) -> dict[str, Any]:
    """A bots.info `bot`; a legacy integration has no user."""
    found: dict[str, Any] = {"id": id, "deleted": False, "name": name, "updated": CREATED}
    found |= {"app_id": app_id} | ({"user_id": user_id} if user_id else {})
    icons = "https://a.slack-edge.com/80588/img/plugins/app/bot_{}.png"
    return found | {"icons": {f"image_{n}": icons.format(n) for n in (36, 48, 72)}}


def channel(
    id: str,
    name: str,
    *,
    is_private: bool,
    is_im: bool,
    is_mpim: bool,
    member: bool,
    user: str | None,
    is_ext_shared: bool = False,
) -> dict[str, Any]:
    """A conversation object: a channel, a group DM (mpim), or a DM (no name, its `user`)."""
    if is_im:
        return {
            "id": id,
            "created": CREATED,
            "is_im": True,
            "is_org_shared": False,
            "user": user or "",
            "is_user_deleted": False,
            "priority": 0,
        }
    topic = {"value": "", "creator": "", "last_set": 0}
    return {
        "id": id,
        "name": name,
        "is_channel": not is_mpim,
        "is_group": is_mpim,
        "is_im": False,
        "is_mpim": is_mpim,
        "is_private": is_private or is_mpim,
        "created": CREATED,
        "creator": "U0CREATOR",
        "is_archived": False,
        "is_general": name == "general",
        "unlinked": 0,
        "name_normalized": name,
        "is_shared": is_ext_shared,
        "is_ext_shared": is_ext_shared,
        "is_org_shared": False,
        "pending_shared": [],
        "is_pending_ext_shared": False,
        "is_member": member,
        "topic": topic,
        "purpose": dict(topic),
        "previous_names": [],
    }


def tombstone(parent: dict[str, Any]) -> dict[str, Any]:
    """What conversations.replies shows where a thread's parent was deleted and its replies
    stayed (captured in hackclub/toriel and slack-edge's tombstone event)."""
    return {
        "type": "message",
        "subtype": "tombstone",
        "text": "This message was deleted.",
        "user": SLACKBOT,
        "hidden": True,
        "ts": parent["ts"],
        "thread_ts": parent["ts"],
        "parent_user_id": SLACKBOT,
    }
