"""The in-memory workspace behind FakeSlack: channels, users, messages and the Web API methods."""

from __future__ import annotations

import base64
import copy
import threading
import time
from typing import Any

Params = dict[str, Any]
Message = dict[str, Any]


class SlackError(Exception):
    """Raised by a method to answer ``{"ok": false, "error": str(exc)}``."""


def ts_micros(ts: str) -> int:
    seconds, _, fraction = str(ts).partition(".")
    return int(seconds) * 1_000_000 + int((fraction + "000000")[:6])


def _by_ts(message: Message) -> int:
    return ts_micros(message["ts"])


def _limit(value: Any, default: int) -> int:
    try:
        parsed = int(value)
    except (TypeError, ValueError):
        return default
    return parsed if parsed > 0 else default


def _paginate(items: list[Any], key: str, params: Params, default_limit: int) -> dict[str, Any]:
    limit = _limit(params.get("limit"), default_limit)
    offset = 0
    if params.get("cursor"):
        try:
            offset = int(base64.b64decode(str(params["cursor"])).decode().removeprefix("offset:"))
        except ValueError as exc:
            raise SlackError("invalid_cursor") from exc
    end = offset + limit
    has_more = end < len(items)
    cursor = base64.b64encode(f"offset:{end}".encode()).decode() if has_more else ""
    metadata = {"next_cursor": cursor}
    return {"ok": True, key: items[offset:end], "has_more": has_more, "response_metadata": metadata}


def _in_range(message: Message, params: Params) -> bool:
    """Apply Slack's ``oldest`` / ``latest`` / ``inclusive`` filters."""
    ts = _by_ts(message)
    inclusive = str(params.get("inclusive", "")).lower() in {"1", "true"}
    if params.get("oldest"):
        oldest = ts_micros(params["oldest"])
        if ts < oldest or (ts == oldest and not inclusive):
            return False
    if params.get("latest"):
        latest = ts_micros(params["latest"])
        if ts > latest or (ts == latest and not inclusive):
            return False
    return True


class SlackWorkspace:
    """Thread-safe workspace state; every public accessor returns copies."""

    def __init__(
        self,
        *,
        team_id: str = "T0001",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team: str = "Fake Team",
    ) -> None:
        self.team_id, self.bot_user_id, self.bot_id, self.team = team_id, bot_user_id, bot_id, team
        self._lock = threading.Lock()
        self._clear_workspace()

    def _clear_workspace(self) -> None:
        with self._lock:
            self._channels: dict[str, dict[str, Any]] = {}
            self._users: dict[str, dict[str, Any]] = {}
            self._history: dict[str, list[Message]] = {}
            self._posted: list[dict[str, Any]] = []
            self._last_ts = 0

    def add_channel(
        self,
        id: str,
        name: str,
        *,
        is_private: bool = False,
        is_im: bool = False,
        member: bool = True,
        user: str | None = None,
    ) -> None:
        """Add a conversation; ``user`` is the other party of an IM."""
        channel: dict[str, Any] = {"id": id, "name": name, "is_channel": not is_im}
        channel |= {"is_group": False, "is_im": is_im, "is_mpim": False}
        channel |= {"is_private": is_private or is_im, "is_member": member}
        channel |= {"user": user} if is_im and user else {}
        with self._lock:
            self._channels[id] = channel

    def add_user(
        self,
        id: str,
        *,
        name: str,
        display_name: str = "",
        real_name: str = "",
        is_bot: bool = False,
    ) -> None:
        profile = {"display_name": display_name, "real_name": real_name}
        user: dict[str, Any] = {"id": id, "team_id": self.team_id, "name": name}
        user |= {"real_name": real_name, "deleted": False, "is_bot": is_bot, "profile": profile}
        with self._lock:
            self._users[id] = user

    def add_message(
        self,
        channel: str,
        *,
        ts: str,
        text: str,
        user: str | None = None,
        bot_id: str | None = None,
        thread_ts: str | None = None,
        subtype: str | None = None,
    ) -> None:
        """Store a message; a reply has ``thread_ts`` = its parent's ts."""
        message: Message = {"type": "message", "ts": ts, "text": text}
        optional = {"user": user, "bot_id": bot_id, "thread_ts": thread_ts, "subtype": subtype}
        message |= {key: value for key, value in optional.items() if value is not None}
        with self._lock:
            self._history.setdefault(channel, []).append(message)
            self._last_ts = max(self._last_ts, ts_micros(ts))

    def posts(self) -> list[dict[str, Any]]:
        """Messages posted through chat.postMessage: channel, text, thread_ts, ts."""
        with self._lock:
            return copy.deepcopy(self._posted)

    @property
    def posted(self) -> list[dict[str, Any]]:
        return self.posts()

    def history(self, channel: str) -> list[Message]:
        """Every stored message of ``channel`` (replies included), oldest first."""
        with self._lock:
            return sorted(copy.deepcopy(self._history.get(channel, [])), key=_by_ts)

    def answer(self, method: str, params: Params) -> dict[str, Any] | None:
        """The response body of a built-in method, or None when the method is not built in."""
        handler = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "conversations.info": self._conversations_info,
            "users.conversations": self._users_conversations,
            "users.info": self._users_info,
        }.get(method)
        if handler is None:
            return None
        with self._lock:
            try:
                return copy.deepcopy(handler(params))
            except SlackError as exc:
                return {"ok": False, "error": str(exc)}

    # The methods below run with the lock held.
    def _next_ts(self) -> str:
        self._last_ts = max(int(time.time() * 1_000_000), self._last_ts + 1)
        return f"{self._last_ts // 1_000_000}.{self._last_ts % 1_000_000:06d}"

    def _with_thread_info(self, channel: str, message: Message) -> Message:
        out = copy.deepcopy(message)
        ts = message["ts"]
        if message.get("thread_ts", ts) != ts:
            return out
        replies = sorted(self._replies(channel, ts), key=_by_ts)
        if replies:
            users = list(dict.fromkeys(m["user"] for m in replies if m.get("user")))
            out |= {"thread_ts": ts, "reply_count": len(replies), "reply_users": users}
            out |= {"reply_users_count": len(users), "latest_reply": replies[-1]["ts"]}
        return out

    def _replies(self, channel: str, ts: str) -> list[Message]:
        history = self._history.get(channel, [])
        return [m for m in history if m.get("thread_ts") == ts and m["ts"] != ts]

    def _channel(self, params: Params) -> str:
        channel = str(params.get("channel") or "")
        if channel not in self._channels and channel not in self._history:
            raise SlackError("channel_not_found")
        return channel

    def _auth_test(self, params: Params) -> dict[str, Any]:
        ids = {"team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": self.bot_id}
        return {
            "ok": True,
            "url": "https://fake.slack.test/",
            "team": self.team,
            "user": "tomo",
        } | ids

    def _chat_post_message(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel:
            raise SlackError("channel_not_found")
        text = str(params.get("text") or "")
        if not text and not params.get("blocks") and not params.get("attachments"):
            raise SlackError("no_text")
        thread_ts = str(params["thread_ts"]) if params.get("thread_ts") else None
        ts = self._next_ts()
        message: Message = {"type": "message", "ts": ts, "text": text}
        message |= {"user": self.bot_user_id, "bot_id": self.bot_id}
        message |= {"thread_ts": thread_ts} if thread_ts else {}
        message |= {"blocks": params["blocks"]} if params.get("blocks") else {}
        # Message metadata (docs.slack.dev/messaging/message-metadata): event_type and
        # event_payload; read back only with include_all_metadata (see FakeSlack).
        message |= {"metadata": params["metadata"]} if params.get("metadata") else {}
        self._history.setdefault(channel, []).append(message)
        self._posted.append({"channel": channel, "text": text, "thread_ts": thread_ts, "ts": ts})
        return {"ok": True, "channel": channel, "ts": ts, "message": message}

    def _conversations_replies(self, params: Params) -> dict[str, Any]:
        """The parent first (always), then the replies inside oldest/latest, oldest first."""
        channel = self._channel(params)
        ts = str(params.get("ts") or "")
        parents = [m for m in self._history.get(channel, []) if m["ts"] == ts]
        replies = [m for m in self._replies(channel, ts) if _in_range(m, params)]
        if not parents and not replies:
            raise SlackError("thread_not_found")
        thread = [self._with_thread_info(channel, m) for m in parents[:1]]
        thread += [copy.deepcopy(m) for m in sorted(replies, key=_by_ts)]
        return _paginate(thread, "messages", params, 1000)

    def _conversations_history(self, params: Params) -> dict[str, Any]:
        """Top-level messages and thread parents, newest first."""
        channel = self._channel(params)
        history = self._history.get(channel, [])
        top = [
            m for m in history if m.get("thread_ts", m["ts"]) == m["ts"] and _in_range(m, params)
        ]
        top.sort(key=_by_ts, reverse=True)
        messages = [self._with_thread_info(channel, m) for m in top]
        return _paginate(messages, "messages", params, 100)

    def _conversations_info(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if channel not in self._channels:
            raise SlackError("channel_not_found")
        return {"ok": True, "channel": self._channels[channel]}

    def _users_conversations(self, params: Params) -> dict[str, Any]:
        types = {t.strip() for t in str(params.get("types") or "public_channel").split(",")}

        def kind(c: dict[str, Any]) -> str:
            return (
                "im" if c["is_im"] else "private_channel" if c["is_private"] else "public_channel"
            )

        channels = [c for c in self._channels.values() if c["is_member"] and kind(c) in types]
        return _paginate(channels, "channels", params, 100)

    def _users_info(self, params: Params) -> dict[str, Any]:
        user = self._users.get(str(params.get("user") or ""))
        if user is None:
            raise SlackError("user_not_found")
        return {"ok": True, "user": user}
