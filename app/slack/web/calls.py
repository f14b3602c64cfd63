"""How a call reaches Slack's Web API: slack-sdk's async client for each retry policy, one HTTP
session shared by the calls of an event loop, one answer or one SlackError, every page read.

The typed methods tomo calls are SlackClient's (app.slack.web.client); this is what they share.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING, Any

from app.observability.metrics import SlackErrorKind, count_slack_error
from app.slack.web.errors import SlackError, error_from_exception, unreadable
from app.slack.web.methods import Method, Retry

if TYPE_CHECKING:
    import aiohttp
    from slack_sdk.web.async_client import AsyncWebClient

RATE_LIMIT_RETRIES = 2

# Connections to Slack are kept open between calls (one TLS handshake for a reply's several
# calls, not one each) for this long at most, well under the idle time after which servers
# close them (uvicorn's 5 s; load balancers' 60 s or more), so that a call never goes out on
# a connection the server is closing: a post on such a connection could not be retried.
KEEPALIVE_SECONDS = 2.0


def _web_client(
    *,
    token: str,
    base_url: str,
    timeout: float,
    policy: Retry,
    session: aiohttp.ClientSession | None,
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
    if policy is Retry.SIGN:
        handlers = []
    elif policy is Retry.POST:
        never_sent: list[type[Exception]] = [aiohttp.ClientConnectorError]
        handlers = [AsyncConnectionErrorRetryHandler(max_retry_count=1, error_types=never_sent)]
    else:
        handlers = [
            AsyncConnectionErrorRetryHandler(max_retry_count=1),
            AsyncServerErrorRetryHandler(max_retry_count=1),
        ]
    if policy in (Retry.READ, Retry.POST):
        handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES))
    # slack-sdk hands `timeout` to aiohttp's ClientTimeout, which takes a float.
    return AsyncWebClient(
        token=token,
        base_url=base_url,
        timeout=timeout,  # type: ignore[arg-type]
        retry_handlers=handlers,
        session=session,
    )


def _session(timeout: float) -> aiohttp.ClientSession:
    """The HTTP session the calls of one event loop share: slack-sdk's client otherwise opens a
    session, and a connection, for every call. `timeout`: each call's, as slack-sdk sets it."""
    import aiohttp

    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(keepalive_timeout=KEEPALIVE_SECONDS),
        timeout=aiohttp.ClientTimeout(total=timeout),
    )


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


class WebCalls:
    """slack-sdk's async client (and aiohttp under it, a quarter of a second of imports) is
    imported on a thread at the first call, so start-up does not wait for it. The calls share
    one HTTP session, and its open connections, on the event loop that made the first call;
    a call from another loop (none in tomo's processes) gets a session of its own, as slack-sdk
    gives it. `close` closes the shared one."""

    def __init__(self, *, token: str, base_url: str, timeout: float = 10.0) -> None:
        self._token, self._base_url, self._timeout = token, base_url, timeout
        self._clients: dict[Retry, AsyncWebClient] = {}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _web(self, policy: Retry) -> AsyncWebClient:
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

    def _client(self, policy: Retry, session: aiohttp.ClientSession | None) -> AsyncWebClient:
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
        self, method: Method, *, policy: Retry = Retry.READ, **params: Any
    ) -> dict[str, Any]:
        """The answer's JSON object; SlackError for every way the call can fail, saying
        whether Slack may have carried it out nonetheless (`uncertain`)."""
        web = await self._web(policy)
        call = getattr(web, method.sdk_name)
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
        self, method: Method, key: str, *, policy: Retry = Retry.READ, **params: Any
    ) -> list[Any]:
        """Every page's `key` items, following `response_metadata.next_cursor`."""
        items: list[Any] = []
        cursor = ""
        while True:
            page = await self._call(
                method, policy=policy, **params, **({"cursor": cursor} if cursor else {})
            )
            found = page.get(key)
            if isinstance(found, list):
                items.extend(found)
            paging = page.get("response_metadata")
            following = paging.get("next_cursor") if isinstance(paging, dict) else None
            if not following or not isinstance(following, str):
                return items
            cursor = following
