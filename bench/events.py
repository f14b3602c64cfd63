"""Event bodies like Slack's: many channels and threads, a mix of message kinds, signed fresh.

The mix, by weight per message: top-level 55, thread replies 30, bot messages 12, mentions of
the bot 2 (`mentions=`). A mention arrives twice, as Slack sends it: an `app_mention` and a
`message` event with different event ids (and half the mentions are inside a thread).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import random
import time
import uuid
from dataclasses import dataclass

from bench.common import SECRET

CHANNELS = 100
USERS = 200
BOT_USER = "UBOT"
TOP, THREAD, BOT, MENTION = "top", "thread", "bot", "mention"
KINDS = (TOP, THREAD, BOT, MENTION)
_counter = itertools.count(1)
# Messages are a minute old, as Slack's events are fresh: the lively-channel pace counts a
# channel's messages of the last PACE_WINDOW_SECONDS by their ts (an hour old, as here until
# 2026-11-28, every channel counted as quiet, each acknowledgement counting it again).
_base = int(time.time()) - 60


@dataclass(frozen=True)
class Delivery:
    event_id: str
    channel: str
    ts: str
    kind: str
    body: bytes


def sign(body: bytes, *, secret: str = SECRET, timestamp: int | None = None) -> tuple[str, str]:
    """(X-Slack-Request-Timestamp, X-Slack-Signature) for this body, as Slack computes them."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256)
    return stamp, "v0=" + digest.hexdigest()


def _blocks(text: str) -> list[dict[str, object]]:
    section = {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
    return [{"type": "rich_text", "block_id": uuid.uuid4().hex[:5], "elements": [section]}]


def _envelope(event: dict[str, object], event_id: str) -> bytes:
    return json.dumps(
        {
            "token": "bench-verification-token",
            "team_id": "T0001",
            "context_team_id": "T0001",
            "context_enterprise_id": None,
            "api_app_id": "A0BENCH",
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": "T0001",
                    "user_id": BOT_USER,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": "4-" + uuid.uuid4().hex * 2,
        }
    ).encode()


def mention(
    channel: str, ts: str, *, user: str = "U0001", text: str = "are you there?"
) -> list[Delivery]:
    """A top-level mention of the bot as Slack delivers it: `app_mention`, then `message`."""
    text = f"<@{BOT_USER}> {text}"
    event: dict[str, object] = {
        "type": "app_mention",
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "channel_type": "channel",
        "team": "T0001",
        "user": user,
        "text": text,
        "client_msg_id": str(uuid.uuid4()),
        "blocks": _blocks(text),
    }
    deliveries = []
    for copy in (event, {**event, "type": "message"}):
        event_id = f"Ev{uuid.uuid4().hex[:10].upper()}"
        deliveries.append(Delivery(event_id, channel, ts, MENTION, _envelope(copy, event_id)))
    return deliveries


def plain(
    channel: str,
    ts: str,
    *,
    thread_ts: str | None = None,
    user: str = "U0001",
    text: str = "does anyone know where the release notes are?",
) -> Delivery:
    """A person's message as Slack delivers it (a reply in a thread with `thread_ts`)."""
    event: dict[str, object] = {
        "type": "message",
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "channel_type": "channel",
        "team": "T0001",
        "user": user,
        "text": text,
        "client_msg_id": str(uuid.uuid4()),
        "blocks": _blocks(text),
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    event_id = f"Ev{uuid.uuid4().hex[:10].upper()}"
    return Delivery(event_id, channel, ts, THREAD if thread_ts else TOP, _envelope(event, event_id))


class Workspace:
    """Generates deliveries; every message gets a unique ts and every delivery an event id."""

    def __init__(self, *, mentions: float = 0.02, seed: int = 7) -> None:
        self._random = random.Random(seed)
        self._weights = (0.55, 0.30, 0.12, mentions)
        self._tops: dict[str, list[str]] = {}

    def _message(self, kind: str) -> list[Delivery]:
        r = self._random
        channel = f"C{r.randrange(CHANNELS):04d}"
        ts = f"{_base}.{next(_counter):06d}"
        tops = self._tops.setdefault(channel, [])
        words = " ".join(r.choice(("lunch", "deploy", "review", "ok", "thanks")) for _ in range(8))
        event: dict[str, object] = {
            "type": "message",
            "ts": ts,
            "event_ts": ts,
            "channel": channel,
            "channel_type": "channel",
            "team": "T0001",
        }
        in_thread = kind == THREAD or (kind == MENTION and r.random() < 0.5)
        if in_thread and tops:
            event["thread_ts"] = r.choice(tops[-20:])
        elif kind != BOT:
            tops.append(ts)
        if kind == BOT:
            event.update(subtype="bot_message", bot_id=f"B{r.randrange(5):03d}", text=words)
        else:
            user = f"U{r.randrange(USERS):04d}"
            text = f"<@{BOT_USER}> {words}" if kind == MENTION else words
            event.update(user=user, text=text, client_msg_id=str(uuid.uuid4()))
        event["blocks"] = _blocks(str(event["text"]))
        copies = [event]
        if kind == MENTION:  # Slack sends a mention twice: app_mention and message
            copies = [{**event, "type": "app_mention"}, event]
        deliveries = []
        for copy in copies:
            event_id = f"Ev{uuid.uuid4().hex[:10].upper()}"
            deliveries.append(Delivery(event_id, channel, ts, kind, _envelope(copy, event_id)))
        return deliveries

    def deliveries(self, count: int) -> list[Delivery]:
        out: list[Delivery] = []
        while len(out) < count:
            out.extend(self._message(self._random.choices(KINDS, self._weights)[0]))
        return out[:count]
