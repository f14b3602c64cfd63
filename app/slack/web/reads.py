"""What tomo reads of Slack's Web API: who it is, people, conversations and their messages.
Each read is retried as Retry.READ says (a 5xx, a dropped connection, a 429 waited out), or,
where the caller has something to fall back on, answers a 429 at once (Retry.READ_NOW)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.slack.web.calls import WebCalls
from app.slack.web.errors import unreadable
from app.slack.web.methods import Method, Retry

# users.conversations' `types` for each question tomo asks it.
MEMBER_TYPES = "public_channel,private_channel,mpim,im"
PRIVATE_TYPES = "private_channel,mpim"
GUEST_TYPES = "public_channel,private_channel,mpim"


@dataclass(frozen=True)
class BotIdentity:
    user_id: str
    bot_id: str | None
    team_id: str | None
    enterprise_id: str | None = None
    app_id: str | None = None  # auth.test names it for some tokens only (else bots.info)
    url: str | None = None  # the workspace's address, "https://example.slack.com/" (permalinks)


def _objects(items: list[Any]) -> list[dict[str, Any]]:
    return [item for item in items if isinstance(item, dict)]


class Reads(WebCalls):
    """The reads of SlackClient (app.slack.web.client)."""

    # Who tomo is, and what it is told about.

    async def auth_test(self) -> BotIdentity:
        data = await self._call(Method.AUTH_TEST)
        if not data.get("user_id"):
            raise unreadable(Method.AUTH_TEST, data)
        return BotIdentity(
            user_id=str(data["user_id"]),
            bot_id=data.get("bot_id"),
            team_id=data.get("team_id"),
            enterprise_id=data.get("enterprise_id") or None,
            app_id=data.get("app_id") or None,
            url=data["url"] if isinstance(data.get("url"), str) and data["url"] else None,
        )

    async def bot_info(self, bot_id: str) -> dict[str, Any]:
        data = await self._call(Method.BOTS_INFO, bot=bot_id)
        return dict(data.get("bot") or {})

    async def file_info(self, file_id: str) -> dict[str, Any]:
        """files.info's answer (`{"ok": true, "file": {...}}`): a Slack Connect stub's details."""
        return await self._call(Method.FILES_INFO, file=file_id)

    async def user_info(self, user_id: str, *, include_locale: bool = False) -> dict[str, Any]:
        """users.info's `user`; with `include_locale`, its `locale` (e.g. "ja-JP") too."""
        params: dict[str, Any] = {"include_locale": True} if include_locale else {}
        data = await self._call(Method.USERS_INFO, user=user_id, **params)
        return dict(data.get("user") or {})

    async def conversation_info(self, channel: str) -> dict[str, Any]:
        data = await self._call(Method.CONVERSATIONS_INFO, channel=channel)
        return dict(data.get("channel") or {})

    # Conversations and their messages.

    async def posts_with_metadata(
        self, *, channel: str, thread_ts: str, after_ts: str, event_type: str
    ) -> list[dict[str, Any]]:
        """Messages newer than `after_ts` in the thread (or, with thread_ts "", at the channel's
        top level) whose metadata is of `event_type`, the metadata included: how tomo finds its
        own posts again. Slack returns metadata only when asked (`include_all_metadata`)."""
        messages = await self.messages_after(
            channel=channel, thread_ts=thread_ts, after_ts=after_ts
        )
        return [
            m
            for m in messages
            if isinstance(m.get("metadata"), dict) and m["metadata"].get("event_type") == event_type
        ]

    async def messages_after(
        self, *, channel: str, thread_ts: str, after_ts: str
    ) -> list[dict[str, Any]]:
        """Every message newer than `after_ts` in the thread (thread_ts "": the channel's top
        level), with its metadata."""
        where: dict[str, Any] = {"channel": channel, "oldest": after_ts, "limit": 200}
        if thread_ts:
            method, where = Method.CONVERSATIONS_REPLIES, where | {"ts": thread_ts}
        else:
            method = Method.CONVERSATIONS_HISTORY
        found = await self._paged(method, "messages", include_all_metadata=True, **where)
        messages = _objects(found)
        return [m for m in messages if str(m.get("ts")) != thread_ts]

    async def thread_messages(
        self, *, channel: str, thread_ts: str, limit: int
    ) -> list[dict[str, Any]]:
        """The thread's parent plus its `limit` most recent replies, oldest first.

        conversations.replies returns the oldest first, so every page is read to reach the end.
        A rate limit raises at once (the caller has the stored messages to fall back on).
        """
        messages = await self._paged(
            Method.CONVERSATIONS_REPLIES,
            "messages",
            policy=Retry.READ_NOW,
            channel=channel,
            ts=thread_ts,
            limit=200,
        )
        by_ts = {str(m.get("ts")): m for m in _objects(messages) if m.get("ts")}
        parent = by_ts.pop(thread_ts, None)
        replies = sorted(by_ts.values(), key=lambda m: float(m["ts"]))[-limit:]
        return ([parent] if parent else []) + replies

    async def recent_history(self, *, channel: str, limit: int) -> list[dict[str, Any]]:
        data = await self._call(Method.CONVERSATIONS_HISTORY, channel=channel, limit=limit)
        return list(data.get("messages") or [])

    async def member_conversations(self) -> list[dict[str, Any]]:
        return await self._conversations_of(None, MEMBER_TYPES)

    async def private_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """The private channels and group DMs that person is in, of those tomo is in too
        (users.conversations with `user`: non-public conversations are those the calling
        token shares with that person)."""
        return await self._conversations_of(user_id, PRIVATE_TYPES)

    async def guest_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """Every channel and group DM a guest is in (public ones too), of the non-public ones
        those tomo shares with them."""
        return await self._conversations_of(user_id, GUEST_TYPES)

    async def _conversations_of(self, user_id: str | None, types: str) -> list[dict[str, Any]]:
        """users.conversations, every page: tomo's own (`user_id` None) or that person's."""
        who: dict[str, Any] = {"user": user_id} if user_id is not None else {}
        channels = await self._paged(
            Method.USERS_CONVERSATIONS,
            "channels",
            **who,
            types=types,
            exclude_archived=True,
            limit=200,
        )
        return _objects(channels)

    async def conversation_members(self, channel: str) -> list[str]:
        """The ids of the people in a conversation (conversations.members, every page)."""
        members = await self._paged(
            Method.CONVERSATIONS_MEMBERS, "members", channel=channel, limit=200
        )
        return [m for m in members if isinstance(m, str)]
