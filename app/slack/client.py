"""Our thin wrapper over slack-sdk's AsyncWebClient: only the calls tomo makes, our errors."""

from __future__ import annotations

import asyncio
import importlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError, SlackClientError

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)


def _web_client(*, token: str, base_url: str, rate_limit_retries: int) -> AsyncWebClient:
    from slack_sdk.http_retry.async_handler import AsyncRetryHandler
    from slack_sdk.http_retry.builtin_async_handlers import (
        AsyncConnectionErrorRetryHandler,
        AsyncRateLimitErrorRetryHandler,
        AsyncServerErrorRetryHandler,
    )
    from slack_sdk.web.async_client import AsyncWebClient

    handlers: list[AsyncRetryHandler] = [
        AsyncConnectionErrorRetryHandler(max_retry_count=1),
        AsyncServerErrorRetryHandler(max_retry_count=1),
    ]
    if rate_limit_retries:
        handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=rate_limit_retries))
    return AsyncWebClient(token=token, base_url=base_url, timeout=10, retry_handlers=handlers)


class SlackError(Exception):
    """A Slack Web API call failed (after slack-sdk's retries)."""

    def __init__(self, method: str, error: str, *, rate_limited: bool = False) -> None:
        super().__init__(f"{method}: {error}")
        self.method = method
        self.error = error
        self.rate_limited = rate_limited


@dataclass(frozen=True)
class BotIdentity:
    user_id: str
    bot_id: str | None
    team_id: str | None
    enterprise_id: str | None = None
    app_id: str | None = None  # auth.test names it for some tokens only (else bots.info)


class SlackClient:
    """slack-sdk's async client (and aiohttp under it, a quarter of a second of imports) is
    imported on a thread at the first call, so start-up does not wait for it."""

    def __init__(self, *, token: str, base_url: str, rate_limit_retries: int = 2) -> None:
        self._token, self._base_url = token, base_url
        self._rate_limit_retries = rate_limit_retries
        self._clients: tuple[AsyncWebClient, AsyncWebClient] | None = None

    async def _web(self, *, wait_if_limited: bool) -> AsyncWebClient:
        if self._clients is None:
            await asyncio.to_thread(importlib.import_module, "slack_sdk.web.async_client")
            if self._clients is None:
                self._clients = (
                    _web_client(
                        token=self._token,
                        base_url=self._base_url,
                        rate_limit_retries=self._rate_limit_retries,
                    ),
                    # For calls with a fallback (thread history): a 429 is answered at once.
                    _web_client(token=self._token, base_url=self._base_url, rate_limit_retries=0),
                )
        return self._clients[0] if wait_if_limited else self._clients[1]

    async def close(self) -> None:
        for web in self._clients or ():
            session = getattr(web, "session", None)
            if session is not None:
                await session.close()

    async def _call(
        self, method: str, *, wait_if_limited: bool = True, **params: Any
    ) -> dict[str, Any]:
        # slack-sdk's named method (chat_postMessage, ...) picks the right encoding for each.
        web = await self._web(wait_if_limited=wait_if_limited)
        call = getattr(web, method.replace(".", "_"))
        try:
            response = await call(**params)
        except SlackApiError as error:
            response = error.response
            status = response.status_code if response is not None else None
            data = response.data if response is not None else None
            # A 5xx from Slack or a proxy may carry a non-JSON body: report the status then.
            code = str(data.get("error")) if isinstance(data, dict) else f"HTTP {status}"
            raise SlackError(method, code, rate_limited=status == 429) from error
        except (SlackClientError, OSError, TimeoutError) as error:
            raise SlackError(method, f"{type(error).__name__}: {error}") from error
        return dict(response.data) if isinstance(response.data, dict) else {}

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
            items.extend(page.get(key) or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or ""
            if not cursor:
                return items

    async def auth_test(self) -> BotIdentity:
        data = await self._call("auth.test")
        return BotIdentity(
            user_id=str(data["user_id"]),
            bot_id=data.get("bot_id"),
            team_id=data.get("team_id"),
            enterprise_id=data.get("enterprise_id") or None,
            app_id=data.get("app_id") or None,
        )

    async def bot_info(self, bot_id: str) -> dict[str, Any]:
        data = await self._call("bots.info", bot=bot_id)
        return dict(data.get("bot") or {})

    async def conversation_info(self, channel: str) -> dict[str, Any]:
        data = await self._call("conversations.info", channel=channel)
        return dict(data.get("channel") or {})

    async def post_message(self, *, channel: str, text: str, thread_ts: str | None) -> str:
        params: dict[str, Any] = {
            "channel": channel,
            "text": text,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if thread_ts:
            params["thread_ts"] = thread_ts
        data = await self._call("chat.postMessage", **params)
        return str(data["ts"])

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

    async def user_info(self, user_id: str) -> dict[str, Any]:
        data = await self._call("users.info", user=user_id)
        return dict(data.get("user") or {})
