"""A workspace for the message tools' tests: conversations of every kind, people in some of
them, messages stored the way tomo stores a fetched history (through the gate:
Recorder.store), and the Kit the tools are built with, from a running tomo's own parts."""

from __future__ import annotations

import time
from typing import Any

from app.slack.events import IncomingMessage, history_message
from app.tools.base import Asker
from tests.conftest import Tomo
from tests.fakes import FakeSlack

# Alice (U1) is in #secret and the group DM; Bob (U2) is in #other and the group DM; Carol (U3)
# is in no private conversation. Each has a DM with tomo.
CONVERSATIONS: dict[str, dict[str, Any]] = {
    "G1": {"name": "secret", "is_private": True, "members": ("U1", "UBOT")},
    "G2": {"name": "other", "is_private": True, "members": ("U2", "UBOT")},
    "G3": {"name": "mpdm-alice--bob--tomo-1", "is_mpim": True, "members": ("U1", "U2", "UBOT")},
    "D1": {"name": "", "is_im": True, "user": "U1"},
    "D2": {"name": "", "is_im": True, "user": "U2"},
    "D3": {"name": "", "is_im": True, "user": "U3"},
}


def build(slack: FakeSlack) -> None:
    """The conversations, before tomo starts (it lists them at start-up)."""
    slack.add_user("U3", name="carol", display_name="Carol")
    for channel, shape in CONVERSATIONS.items():
        slack.add_channel(channel, **shape)


def asker(channel: str, user: str | None = "U1", *, thread_ts: str = "") -> Asker:
    return Asker(team_id="T0001", channel=channel, thread_ts=thread_ts, user_id=user, claim_id=1)


_counter = iter(range(1, 1_000_000))


def ts_ago(seconds: float) -> str:
    """A Slack ts `seconds` ago, unique within the run."""
    return f"{int(time.time() - seconds)}.{next(_counter):06d}"


async def store(
    tomo: Tomo,
    channel: str,
    text: str,
    *,
    user: str = "U1",
    ts: str | None = None,
    thread_ts: str | None = None,
    ago: float = 60.0,
) -> str:
    """A message as conversations.history gives it, stored as tomo stores history, its author's
    name learnt as tomo learns it after a message; its ts."""
    ts = ts or ts_ago(ago)
    raw: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": ts}
    raw |= {"thread_ts": thread_ts} if thread_ts else {}
    message = history_message(raw, channel=channel)
    assert isinstance(message, IncomingMessage)
    await tomo.runtime.recorder.store([message])
    await tomo.runtime.directory.fetch_person(user)
    return ts
