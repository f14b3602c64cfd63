"""Our thin wrapper over slack-sdk's AsyncWebClient: only the calls tomo makes, our errors."""

from __future__ import annotations

import asyncio
import importlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.observability.metrics import SlackErrorKind, count_slack_error
from app.slack.web.errors import SlackError, error_from_exception, unreadable

if TYPE_CHECKING:
    import aiohttp
    from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["BotIdentity", "SlackClient", "SlackError"]

logger = logging.getLogger(__name__)

# How a call may be retried. A read is retried after a 5xx or a dropped connection; a post
# never is, since Slack may have posted it (app.slack.web.errors): only a connection that was never
# made, or a 429 (Slack did nothing), is tried again. `wait_if_limited=False` answers a 429 at
# once, for calls that have something else to fall back on. A sign ("on it") is tried once:
# it must be quick, and it has a fallback of its own.
READ, READ_NOW, POST, SIGN = "read", "read-now", "post", "sign"


def _web_client(
    *, token: str, base_url: str, timeout: float, policy: str, session: aiohttp.ClientSession | None
) -> AsyncWebClient:
    import aiohttp
    from slack_sdk.http_retry.async_handler import AsyncRetryHandler
    from slack_sdk.http_retry.builtin_async_handlers import (
        AsyncConnectionErrorRetryHandler,
        AsyncRateLimitErrorRetryHandler,
        AsyncServerErrorRetryHandler,
    )
    from slack_sdk.web.async_client import AsyncWebClient

    handlers: list[AsyncRetryHandler]
    if policy == SIGN:
        handlers = []
    elif policy == POST:
        never_sent: list[type[Exception]] = [aiohttp.ClientConnectorError]
        handlers = [AsyncConnectionErrorRetryHandler(max_retry_count=1, error_types=never_sent)]
    else:
        handlers = [
            AsyncConnectionErrorRetryHandler(max_retry_count=1),
            AsyncServerErrorRetryHandler(max_retry_count=1),
        ]
    if policy in (READ, POST):
        handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES))
    # slack-sdk hands `timeout` to aiohttp's ClientTimeout, which takes a float.
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        timeout=timeout,  # type: ignore[arg-type]
        retry_handlers=handlers,
        session=session,
    )


# Connections to Slack are kept open between calls (one TLS handshake for a reply's several
# calls, not one each) for this long at most, well under the idle time after which servers
# close them (uvicorn's 5 s; load balancers' 60 s or more), so that a call never goes out on
# a connection the server is closing: a post on such a connection could not be retried.
KEEPALIVE_SECONDS = 2.0


def _session(timeout: float) -> aiohttp.ClientSession:
    """The HTTP session the calls of one event loop share: slack-sdk's client otherwise opens a
    session, and a connection, for every call. `timeout`: each call's, as slack-sdk sets it."""
    import aiohttp

    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(keepalive_timeout=KEEPALIVE_SECONDS),
        timeout=aiohttp.ClientTimeout(total=timeout),
    )


RATE_LIMIT_RETRIES = 2


@dataclass(frozen=True)
class BotIdentity:
    user_id: str
    bot_id: str | None
    team_id: str | None
    enterprise_id: str | None = None
    app_id: str | None = None  # auth.test names it for some tokens only (else bots.info)
    url: str | None = None  # the workspace's address, "https://example.slack.com/" (permalinks)


def _counted(error: SlackError) -> SlackError:
    """The failed call counted by method (app.observability.metrics), and the error as it was."""
    if error.rate_limited:
        kind = SlackErrorKind.RATE_LIMITED
    elif error.token_refused:
        kind = SlackErrorKind.TOKEN_REFUSED
    else:
        kind = SlackErrorKind.UNCERTAIN if error.uncertain else SlackErrorKind.ERROR
    count_slack_error(error.method, kind)
    return error


class SlackClient:
    """slack-sdk's async client (and aiohttp under it, a quarter of a second of imports) is
    imported on a thread at the first call, so start-up does not wait for it. The calls share
    one HTTP session, and its open connections, on the event loop that made the first call;
    a call from another loop (none in tomo's processes) gets a session of its own, as slack-sdk
    gives it. `close` closes the shared one."""

    def __init__(self, *, token: str, base_url: str, timeout: float = 10.0) -> None:
        self._token, self._base_url, self._timeout = token, base_url, timeout
        self._clients: dict[str, AsyncWebClient] = {}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _web(self, policy: str) -> AsyncWebClient:
        loop = asyncio.get_running_loop()
        if policy not in self._clients:
            await asyncio.to_thread(importlib.import_module, "slack_sdk.web.async_client")
            if policy not in self._clients:
                if self._session is None:
                    self._session, self._loop = _session(self._timeout), loop
                self._clients[policy] = self._client(policy, self._session)
        if loop is not self._loop:
            return self._client(policy, None)
        return self._clients[policy]

    def _client(self, policy: str, session: aiohttp.ClientSession | None) -> AsyncWebClient:
        return _web_client(
            token=self._token,
            base_url=self._base_url,
            timeout=self._timeout,
            policy=policy,
            session=session,
        )

    async def close(self) -> None:
        session, self._session = self._session, None
        self._clients.clear()
        if session is not None:
            await session.close()

    async def _call(
        self, method: str, *, wait_if_limited: bool = True, policy: str = READ, **params: Any
    ) -> dict[str, Any]:
        """The answer's JSON object; SlackError for every way the call can fail, saying
        whether Slack may have carried it out nonetheless (`uncertain`)."""
        if policy == READ and not wait_if_limited:
            policy = READ_NOW
        web = await self._web(policy)
        # slack-sdk's named method (chat_postMessage, ...) picks the right encoding for each.
        call = getattr(web, method.replace(".", "_"))
        try:
            response = await call(**params)
            data = response.data
            if not isinstance(data, dict) or data.get("ok") is not True:
                raise unreadable(method, data)
        except SlackError as error:
            _counted(error)
            raise
        except Exception as error:  # every shape slack-sdk and aiohttp fail in: see errors.py
            raise _counted(error_from_exception(method, error)) from error
        return data

    async def _paged(
        self, method: str, key: str, *, wait_if_limited: bool = True, **params: Any
    ) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = ""
        while True:
            page = await self._call(
                method,
                wait_if_limited=wait_if_limited,
                **params,
                **({"cursor": cursor} if cursor else {}),
            )
            found = page.get(key)
            if isinstance(found, list):
                items.extend(item for item in found if isinstance(item, dict))
            paging = page.get("response_metadata")
            following = paging.get("next_cursor") if isinstance(paging, dict) else None
            if not following or not isinstance(following, str):
                return items
            cursor = following

    async def auth_test(self) -> BotIdentity:
        data = await self._call("auth.test")
        if not data.get("user_id"):
            raise unreadable("auth.test", data)
        return BotIdentity(
            user_id=str(data["user_id"]),
            bot_id=data.get("bot_id"),
            team_id=data.get("team_id"),
            enterprise_id=data.get("enterprise_id") or None,
            app_id=data.get("app_id") or None,
            url=data["url"] if isinstance(data.get("url"), str) and data["url"] else None,
        )

    async def bot_info(self, bot_id: str) -> dict[str, Any]:
        data = await self._call("bots.info", bot=bot_id)
        return dict(data.get("bot") or {})

    async def file_info(self, file_id: str) -> dict[str, Any]:
        """files.info's answer (`{"ok": true, "file": {...}}`): a Slack Connect stub's details."""
        return await self._call("files.info", file=file_id)

    async def conversation_info(self, channel: str) -> dict[str, Any]:
        data = await self._call("conversations.info", channel=channel)
        return dict(data.get("channel") or {})

    async def post_message(
        self,
        *,
        channel: str,
        text: str,
        thread_ts: str | None,
        metadata: dict[str, Any] | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> str:
        """Post once: never retried after Slack may have received it. A SlackError with
        `uncertain` set means the post may be in Slack all the same (look before posting again:
        `posts_with_metadata`). With `blocks`, Slack shows them instead of `text`."""
        params: dict[str, Any] = {
            "channel": channel,
            "text": text,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if thread_ts:
            params["thread_ts"] = thread_ts
        if metadata:
            params["metadata"] = metadata
        if blocks:
            params["blocks"] = blocks
        data = await self._call("chat.postMessage", policy=POST, **params)
        ts = data.get("ts")
        if not isinstance(ts, str) or not ts:
            raise unreadable("chat.postMessage", data)
        return ts

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
            method, where = "conversations.replies", where | {"ts": thread_ts}
        else:
            method = "conversations.history"
        messages = await self._paged(method, "messages", include_all_metadata=True, **where)
        return [m for m in messages if str(m.get("ts")) != thread_ts]

    async def write(self, method: str, **params: Any) -> dict[str, Any]:
        """A call that writes (chat.update, chat.appendStream, ...): like a post, never
        retried once Slack may have received it."""
        return await self._call(method, policy=POST, **params)

    async def writer(self) -> AsyncWebClient:
        """slack-sdk's client for writes, for its helpers (the chat stream)."""
        return await self._web(POST)

    async def add_reaction(self, *, channel: str, ts: str, name: str) -> None:
        """React to a message (already reacted counts as done); tried once."""
        try:
            await self._call("reactions.add", policy=SIGN, channel=channel, timestamp=ts, name=name)
        except SlackError as error:
            if error.error != "already_reacted":
                raise

    async def remove_reaction(self, *, channel: str, ts: str, name: str) -> None:
        """Take a reaction back (none there counts as done); tried once."""
        try:
            await self._call(
                "reactions.remove", policy=SIGN, channel=channel, timestamp=ts, name=name
            )
        except SlackError as error:
            if error.error not in ("no_reaction", "message_not_found"):
                raise

    async def set_thread_status(self, *, channel: str, thread_ts: str, status: str) -> None:
        """The "is thinking..." line under a thread (assistant.threads.setStatus; "" clears
        it, and so does the app's next post there); tried once."""
        await self._call(
            "assistant.threads.setStatus",
            policy=SIGN,
            channel_id=channel,
            thread_ts=thread_ts,
            status=status,
        )

    async def mark(self, method: str, **params: Any) -> dict[str, Any]:
        """A call that only marks something for people to see (app.slack.web.assistant_threads):
        tried once, like a sign."""
        return await self._call(method, policy=SIGN, **params)

    async def thread_messages(
        self, *, channel: str, thread_ts: str, limit: int
    ) -> list[dict[str, Any]]:
        """The thread's parent plus its `limit` most recent replies, oldest first.

        conversations.replies returns the oldest first, so every page is read to reach the end.
        A rate limit raises at once (the caller has the stored messages to fall back on).
        """
        messages = await self._paged(
            "conversations.replies",
            "messages",
            wait_if_limited=False,
            channel=channel,
            ts=thread_ts,
            limit=200,
        )
        by_ts = {str(m.get("ts")): m for m in messages if m.get("ts")}
        parent = by_ts.pop(thread_ts, None)
        replies = sorted(by_ts.values(), key=lambda m: float(m["ts"]))[-limit:]
        return ([parent] if parent else []) + replies

    async def recent_history(self, *, channel: str, limit: int) -> list[dict[str, Any]]:
        data = await self._call("conversations.history", channel=channel, limit=limit)
        return list(data.get("messages") or [])

    async def member_conversations(self) -> list[dict[str, Any]]:
        return await self._paged(
            "users.conversations",
            "channels",
            types="public_channel,private_channel,mpim,im",
            exclude_archived=True,
            limit=200,
        )

    async def private_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """The private channels and group DMs that person is in, of those tomo is in too
        (users.conversations with `user`: non-public conversations are those the calling
        token shares with that person)."""
        return await self._paged(
            "users.conversations",
            "channels",
            user=user_id,
            types="private_channel,mpim",
            exclude_archived=True,
            limit=200,
        )

    async def guest_conversations_of(self, user_id: str) -> list[dict[str, Any]]:
        """Every channel and group DM a guest is in (public ones too), of the non-public ones
        those tomo shares with them."""
        return await self._paged(
            "users.conversations",
            "channels",
            user=user_id,
            types="public_channel,private_channel,mpim",
            exclude_archived=True,
            limit=200,
        )

    async def conversation_members(self, channel: str) -> list[str]:
        """The ids of the people in a conversation (conversations.members, every page)."""
        members: list[str] = []
        cursor = ""
        while True:
            paging_params: dict[str, Any] = {"cursor": cursor} if cursor else {}
            page = await self._call(
                "conversations.members", channel=channel, limit=200, **paging_params
            )
            found = page.get("members")
            members += [m for m in found if isinstance(m, str)] if isinstance(found, list) else []
            paging = page.get("response_metadata")
            following = paging.get("next_cursor") if isinstance(paging, dict) else None
            if not following or not isinstance(following, str):
                return members
            cursor = following

    async def user_info(self, user_id: str, *, include_locale: bool = False) -> dict[str, Any]:
        """users.info's `user`; with `include_locale`, its `locale` (e.g. "ja-JP") too."""
        params: dict[str, Any] = {"include_locale": True} if include_locale else {}
        data = await self._call("users.info", user=user_id, **params)
        return dict(data.get("user") or {})
