"""The in-memory workspace behind FakeSlack: channels, users, messages and the Web API methods."""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

from tests.fakes import slack_shapes as shapes
from tests.fakes.slack_blocks import checked_blocks
from tests.fakes.slack_paging import SlackError, by_ts, in_range, paginate, ts_micros

Params = dict[str, Any]
Message = dict[str, Any]


class SlackWorkspace:
    """Thread-safe workspace state; every public accessor returns copies."""

    def __init__(
        self,
        *,
        team_id: str = "T0001",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team: str = "Fake Team",
        app_id: str = "A1",
    ) -> None:
        self.team_id, self.bot_user_id, self.bot_id, self.team = team_id, bot_user_id, bot_id, team
        self.app_id = app_id
        self._lock = threading.Lock()
        self._clear_workspace()

    def _clear_workspace(self) -> None:
        """An empty workspace, but for what every workspace has: Slackbot, and tomo itself
        (its bot user and its bot)."""
        with self._lock:
            self._channels: dict[str, dict[str, Any]] = {}
            self._members: dict[str, set[str]] = {}  # people in a conversation, when set
            self._users: dict[str, dict[str, Any]] = {
                shapes.SLACKBOT: shapes.slackbot(self.team_id)
            }
            self._bots: dict[str, dict[str, Any]] = {}
            self._history: dict[str, list[Message]] = {}
            self._posted: list[dict[str, Any]] = []
            self._last_ts = 0
            self._blocks_refused: str | None = None  # refuse_blocks()
            self._locales: dict[str, str] = {}
        self.add_user(
            self.bot_user_id, name="tomo", real_name="tomo", is_bot=True, bot_id=self.bot_id
        )
        self.add_bot(self.bot_id, name="tomo", user_id=self.bot_user_id)

    def add_channel(
        self,
        id: str,
        name: str,
        *,
        is_private: bool = False,
        is_im: bool = False,
        is_mpim: bool = False,
        member: bool = True,
        user: str | None = None,
        members: tuple[str, ...] = (),
        is_ext_shared: bool = False,
    ) -> None:
        """Add a conversation; ``user`` is the other party of an IM (which has no name);
        ``members``: the people in it, for users.conversations with ``user`` and
        conversations.members; ``is_ext_shared``: a Slack Connect channel."""
        channel = shapes.channel(
            id,
            name,
            is_private=is_private,
            is_im=is_im,
            is_mpim=is_mpim,
            member=member,
            user=user,
            is_ext_shared=is_ext_shared,
        )
        with self._lock:
            self._channels[id] = channel
            self._members[id] = set(members) | ({user} if user else set())

    def set_members(self, channel: str, members: tuple[str, ...]) -> None:
        """Who is in a conversation now (users.conversations with ``user``,
        conversations.members)."""
        with self._lock:
            self._members[channel] = set(members)

    def blocks_of(self, channel: str, ts: str) -> list[dict[str, Any]] | None:
        """The blocks of a message tomo posted or streamed (None: it has none)."""
        with self._lock:
            for message in self._history.get(channel, []):
                if message["ts"] == ts:
                    return copy.deepcopy(message.get("blocks"))
        return None

    def set_locale(self, user_id: str, locale: str) -> None:
        """The person's Slack locale (e.g. "ja-JP"), which users.info names only when asked
        (`include_locale`, docs.slack.dev/reference/methods/users.info); "en-US" unless set."""
        with self._lock:
            self._locales[user_id] = locale

    def refuse_blocks(self, error: str | None = "invalid_blocks") -> None:
        """Answer `error` to every message sent with blocks (None: accept them again)."""
        with self._lock:
            self._blocks_refused = error

    def add_user(
        self,
        id: str,
        *,
        name: str,
        display_name: str = "",
        real_name: str = "",
        is_bot: bool = False,
        bot_id: str | None = None,
        deleted: bool = False,
        guest: str | None = None,
        team_id: str | None = None,
        enterprise_id: str | None = None,
    ) -> None:
        """A person; a bot user with ``is_bot`` (with its ``bot_id``, or none: a legacy bot
        user); a deactivated account with ``deleted``; a guest (``guest``: "multi" or
        "single"); a person of another organisation (``team_id``)."""
        user = shapes.user(
            id,
            team_id=team_id or self.team_id,
            guest=guest,
            enterprise_id=enterprise_id,
            name=name,
            display_name=display_name,
            real_name=real_name,
            is_bot=is_bot,
            bot_id=bot_id,
            app_id=self.app_id if bot_id == self.bot_id else None,
            deleted=deleted,
        )
        with self._lock:
            self._users[id] = user

    def add_bot(self, id: str, *, name: str, user_id: str | None = None) -> None:
        """A bot for bots.info; tomo's own carries the app id."""
        app_id = self.app_id if id == self.bot_id else f"A{id.removeprefix('B')}"
        with self._lock:
            self._bots[id] = shapes.bot(id, name=name, app_id=app_id, user_id=user_id)

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
        **fields: Any,
    ) -> None:
        """Store a message; a reply has ``thread_ts`` = its parent's ts. ``fields`` are any
        other fields of Slack's message object (attachments, files, blocks, ...)."""
        message: Message = {"type": "message", "ts": ts, "text": text}
        optional = {"user": user, "bot_id": bot_id, "thread_ts": thread_ts, "subtype": subtype}
        message |= {key: value for key, value in optional.items() if value is not None}
        message |= {"team": self.team_id} if user and not bot_id else {}
        message |= fields
        with self._lock:
            self._history.setdefault(channel, []).append(message)
            self._last_ts = max(self._last_ts, ts_micros(ts))

    def delete_parent(self, channel: str, ts: str) -> None:
        """Delete a thread's parent as Slack does when it has replies: a tombstone stays."""
        with self._lock:
            history = self._history.get(channel, [])
            for n, message in enumerate(history):
                if message["ts"] == ts:
                    history[n] = shapes.tombstone(message)

    def posts(self) -> list[dict[str, Any]]:
        """Messages posted through chat.postMessage: channel, text, thread_ts, ts (their blocks:
        ``blocks_of``)."""
        with self._lock:
            return copy.deepcopy(self._posted)

    @property
    def posted(self) -> list[dict[str, Any]]:
        return self.posts()

    def history(self, channel: str) -> list[Message]:
        """Every stored message of ``channel`` (replies included), oldest first."""
        with self._lock:
            return sorted(copy.deepcopy(self._history.get(channel, [])), key=by_ts)

    def answer(self, method: str, params: Params) -> dict[str, Any] | None:
        """The response body of a built-in method, or None when the method is not built in."""
        handler = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._chat_post_message,
            "conversations.replies": self._conversations_replies,
            "conversations.history": self._conversations_history,
            "conversations.info": self._conversations_info,
            "conversations.members": self._conversations_members,
            "bots.info": self._bots_info,
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
        replies = sorted(self._replies(channel, ts), key=by_ts)
        if replies:
            users = list(dict.fromkeys(m["user"] for m in replies if m.get("user")))
            out |= {"thread_ts": ts, "reply_count": len(replies), "reply_users": users}
            out |= {"reply_users_count": len(users), "latest_reply": replies[-1]["ts"]}
            out |= {"is_locked": False, "subscribed": False}
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
        blocks = checked_blocks(params.get("blocks"), refused=self._blocks_refused)
        if not text and not blocks and not params.get("attachments"):
            raise SlackError("no_text")
        thread_ts = str(params["thread_ts"]) if params.get("thread_ts") else None
        ts = self._next_ts()
        message: Message = {"type": "message", "ts": ts, "text": text}
        message |= {"user": self.bot_user_id, "bot_id": self.bot_id}
        message |= {"thread_ts": thread_ts} if thread_ts else {}
        message |= {"blocks": blocks} if blocks else {}
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
        # `ts` may be any message of the thread: its parent's is the thread's (Slack's
        # reference of conversations.replies: "either a thread's parent message or a message
        # in the thread").
        asked = [m for m in self._history.get(channel, []) if m["ts"] == ts]
        ts = str(asked[0].get("thread_ts") or ts) if asked else ts
        parents = [m for m in self._history.get(channel, []) if m["ts"] == ts]
        replies = [m for m in self._replies(channel, ts) if in_range(m, params)]
        if not parents and not replies:
            raise SlackError("thread_not_found")
        thread = [self._with_thread_info(channel, m) for m in parents[:1]]
        parent_user = parents[0].get("user") if parents else None
        for reply in sorted(replies, key=by_ts):
            reply = copy.deepcopy(reply)
            reply |= {"parent_user_id": parent_user} if parent_user else {}
            thread.append(reply)
        return paginate(thread, "messages", params, 1000)

    def _conversations_history(self, params: Params) -> dict[str, Any]:
        """Top-level messages and thread parents, newest first."""
        channel = self._channel(params)
        history = self._history.get(channel, [])
        top = [m for m in history if m.get("thread_ts", m["ts"]) == m["ts"] and in_range(m, params)]
        top.sort(key=by_ts, reverse=True)
        messages = [self._with_thread_info(channel, m) for m in top]
        return paginate(messages, "messages", params, 100)

    def _conversations_info(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if channel not in self._channels:
            raise SlackError("channel_not_found")
        return {"ok": True, "channel": self._channels[channel]}

    def _conversations_members(self, params: Params) -> dict[str, Any]:
        """The ids of the people in it, tomo included (docs.slack.dev/reference/methods/
        conversations.members: `members`, paged by `response_metadata.next_cursor`)."""
        channel = str(params.get("channel") or "")
        if channel not in self._channels:
            raise SlackError("channel_not_found")
        people = set(self._members.get(channel, set())) | {self.bot_user_id}
        items = [{"id": m} for m in sorted(people)]
        page = paginate(items, "members", params, 100)
        return {"ok": True, "members": [m["id"] for m in page["members"]]} | {
            "response_metadata": page["response_metadata"]
        }

    def _users_conversations(self, params: Params) -> dict[str, Any]:
        types = {t.strip() for t in str(params.get("types") or "public_channel").split(",")}

        def kind(c: dict[str, Any]) -> str:
            if c["is_im"] or c.get("is_mpim"):
                return "im" if c["is_im"] else "mpim"
            return "private_channel" if c["is_private"] else "public_channel"

        # A DM has no is_member: the bot is always in its own DMs. With `user`, that person's
        # conversations; of the non-public ones, only those the bot shares (Slack's reference).
        person = params.get("user")
        channels = [
            c
            for c in self._channels.values()
            if (c.get("is_member", True) or (person and kind(c) == "public_channel"))
            and kind(c) in types
            and (not person or person in self._members.get(c["id"], set()))
        ]
        return paginate(channels, "channels", params, 100)

    def _users_info(self, params: Params) -> dict[str, Any]:
        user = self._users.get(str(params.get("user") or ""))
        if user is None:
            raise SlackError("user_not_found")
        if str(params.get("include_locale")).lower() in ("1", "true"):
            user = user | {"locale": self._locales.get(user["id"], "en-US")}
        return {"ok": True, "user": user}

    def _bots_info(self, params: Params) -> dict[str, Any]:
        bot = self._bots.get(str(params.get("bot") or ""))
        if bot is None:
            raise SlackError("bot_not_found")
        return {"ok": True, "bot": bot}
