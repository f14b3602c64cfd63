"""Slack for the replay: the calls tomo makes, answered from the replayed conversation.

It has no web client at all, so nothing can leave the process: a call it does not know fails
like a Slack error would.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.slack.web.client import BotIdentity, SlackClient, SlackError
from app.slack.web.methods import Method

BOT_USER_ID = "UTOMO"
BOT_ID = "BTOMO"
TEAM_ID = "TREPLAY"

PostHook = Callable[[str, str, str, str], None]  # channel, thread_ts, ts, text


class ReplaySlack(SlackClient):
    def __init__(
        self,
        *,
        channels: dict[str, tuple[str, str]],  # id -> (name, channel_type)
        people: dict[str, str],  # id -> display name
        persona_name: str,
        on_post: PostHook | None = None,
    ) -> None:
        # SlackClient.__init__ is not called: there is no web client to reach Slack with.
        self._channels = channels
        self._people = people
        self._persona_name = persona_name
        self.on_post = on_post
        self._messages: dict[str, list[dict[str, Any]]] = {}
        self._last_ts = 0.0

    def next_ts(self) -> str:
        """A Slack-like ts of now, strictly increasing."""
        self._last_ts = max(time.time(), self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

    def add_message(self, channel: str, message: dict[str, Any]) -> None:
        self._messages.setdefault(channel, []).append(dict(message))

    def text_of(self, channel: str, ts: str) -> str | None:
        for message in self._messages.get(channel, []):
            if message["ts"] == ts:
                return str(message.get("text") or "")
        return None

    async def close(self) -> None:
        return None

    async def auth_test(self) -> BotIdentity:
        return BotIdentity(user_id=BOT_USER_ID, bot_id=BOT_ID, team_id=TEAM_ID)

    async def post_message(
        self,
        *,
        channel: str,
        text: str,
        thread_ts: str | None,
        metadata: dict[str, Any] | None = None,
        blocks: list[dict[str, Any]] | None = None,  # the feedback buttons: not replayed
    ) -> str:
        if channel not in self._channels:
            raise SlackError("chat.postMessage", "channel_not_found")
        ts = self.next_ts()
        message: dict[str, Any] = {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID}
        message |= {"text": text} | ({"metadata": metadata} if metadata else {})
        self.add_message(channel, {**message, "ts": ts, "thread_ts": thread_ts or None})
        if self.on_post is not None:
            self.on_post(channel, thread_ts or "", ts, text)
        return ts

    async def posts_with_metadata(
        self, *, channel: str, thread_ts: str, after_ts: str, event_type: str
    ) -> list[dict[str, Any]]:
        messages = await self.messages_after(
            channel=channel, thread_ts=thread_ts, after_ts=after_ts
        )
        return [m for m in messages if (m.get("metadata") or {}).get("event_type") == event_type]

    async def messages_after(
        self, *, channel: str, thread_ts: str, after_ts: str
    ) -> list[dict[str, Any]]:
        return [
            dict(m)
            for m in self._messages.get(channel, [])
            if (m.get("thread_ts") or "") == thread_ts and float(m["ts"]) > float(after_ts)
        ]

    # The replay posts replies whole (STREAM_REPLIES=false): it writes nothing else.
    async def update_message(self, **params: Any) -> None:
        raise SlackError(Method.CHAT_UPDATE, "unknown_method")

    async def chat_stream(self, **params: Any) -> Any:
        raise SlackError(Method.CHAT_START_STREAM, "unknown_method")

    async def append_stream(self, **params: Any) -> None:
        raise SlackError(Method.CHAT_APPEND_STREAM, "unknown_method")

    async def stop_stream(self, **params: Any) -> None:
        raise SlackError(Method.CHAT_STOP_STREAM, "unknown_method")

    # The replay shows no "on it": nobody is watching the conversation live.
    async def add_reaction(self, *, channel: str, ts: str, name: str) -> None:
        return None

    async def remove_reaction(self, *, channel: str, ts: str, name: str) -> None:
        return None

    async def set_thread_status(self, *, channel: str, thread_ts: str, status: str) -> None:
        return None

    # The AI app's prompts and titles: nothing to show offline.
    async def set_suggested_prompts(self, **params: Any) -> None:
        return None

    async def set_thread_title(self, *, channel: str, thread_ts: str, title: str) -> None:
        return None

    async def thread_messages(
        self, *, channel: str, thread_ts: str, limit: int
    ) -> list[dict[str, Any]]:
        thread = [
            m
            for m in self._messages.get(channel, [])
            if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts
        ]
        parent = [m for m in thread if m["ts"] == thread_ts]
        replies = [m for m in thread if m["ts"] != thread_ts][-limit:]
        return [dict(m) for m in parent + replies]

    async def recent_history(self, *, channel: str, limit: int) -> list[dict[str, Any]]:
        top = [m for m in self._messages.get(channel, []) if not m.get("thread_ts")]
        return [dict(m) for m in reversed(top[-limit:])]  # newest first, like Slack

    async def member_conversations(self) -> list[dict[str, Any]]:
        return [self._conversation(channel_id) for channel_id in self._channels]

    async def private_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """A replayed conversation has no private channels beside itself."""
        return []

    async def guest_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """A replay's people are members, not guests: no conversation beside the replayed one."""
        return []

    async def conversation_members(self, channel: str) -> list[str]:
        """Everyone the replay names is in its conversation, with tomo."""
        if channel not in self._channels:
            raise SlackError("conversations.members", "channel_not_found")
        return [*self._people, BOT_USER_ID]

    def _conversation(self, channel_id: str) -> dict[str, Any]:
        name, kind = self._channels[channel_id]
        return {
            "id": channel_id,
            "name": name,
            "is_im": kind == "im",
            "is_private": kind in ("group", "mpim", "im"),
            **({"user": name} if kind == "im" else {}),
        }

    async def conversation_info(self, channel: str) -> dict[str, Any]:
        if channel not in self._channels:
            raise SlackError("conversations.info", "channel_not_found")
        return self._conversation(channel)

    async def file_info(self, file_id: str) -> dict[str, Any]:
        raise SlackError("files.info", "file_not_found")  # a replay's files are only named

    async def bot_info(self, bot_id: str) -> dict[str, Any]:
        if bot_id != BOT_ID:
            raise SlackError("bots.info", "bot_not_found")
        return {"id": BOT_ID, "name": self._persona_name, "user_id": BOT_USER_ID}

    async def user_info(self, user_id: str, *, include_locale: bool = False) -> dict[str, Any]:
        if user_id == BOT_USER_ID:
            name, is_bot = self._persona_name, True
        elif user_id in self._people:
            name, is_bot = self._people[user_id], False
        else:
            raise SlackError("users.info", "user_not_found")
        return {
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name.lower(),
            "is_bot": is_bot,
            "profile": {"display_name": name, "real_name": name},
        }
