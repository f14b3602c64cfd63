"""Downloading a file Slack hosts, with the bot token, from Slack's file host only.

The token goes only to Slack's file host: `https://files.slack.com` when SLACK_API_URL is
Slack's own (`https://files.slack-gov.com` for GovSlack's), else the host of SLACK_API_URL (a
stand-in in tests, a proxy); a URL an event
names on any other host is never fetched (an external file, a forged event). Redirects are
followed; httpx drops the token on one that leaves the host. What comes back must be the
file: Slack answers a request it will not serve (the token lacks `files:read`) with its HTML
sign-in page and a 200, which is told apart from a file by its type, as is any error status.
A file larger than MAX_FILE_MB (Slack's `size`, or what arrives) is not taken; the whole
download is bounded in time.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import httpx

from app.domain import SharedFile

SLACK_FILE_HOST = ("https", "files.slack.com", 443)
# Slack's own Web API domains (and their subdomains), each with its file host.
SLACK_DOMAINS = {
    "slack.com": SLACK_FILE_HOST,
    "slack-gov.com": ("https", "files.slack-gov.com", 443),
}
MAX_REDIRECTS = 3


class Unreadable(Exception):
    """The file could not be had; `scope` when Slack refused it for want of files:read."""

    def __init__(self, why: str, *, scope: bool = False) -> None:
        super().__init__(why)
        self.scope = scope


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return parts.scheme, parts.hostname.lower(), port


def file_hosts(api_url: str) -> set[tuple[str, str, int]]:
    """Where files may be fetched with the token: Slack's file host for Slack's own Web API,
    the API's own host for any other (a stand-in, a proxy)."""
    api = _origin(api_url)
    if api is None:
        return {SLACK_FILE_HOST}
    for domain, files in SLACK_DOMAINS.items():
        if api[1] == domain or api[1].endswith(f".{domain}"):
            return {files}
    return {api}


class Fetcher:
    def __init__(self, *, token: str, api_url: str, max_bytes: int, timeout: float) -> None:
        self._token = token
        self._hosts = file_hosts(api_url)
        self._max_bytes = max_bytes
        self._timeout = timeout
        self._client = httpx.AsyncClient(
            follow_redirects=True, max_redirects=MAX_REDIRECTS, timeout=timeout
        )

    async def close(self) -> None:
        await self._client.aclose()

    @property
    def max_bytes(self) -> int:
        return self._max_bytes

    def allowed(self, url: str) -> bool:
        """Whether the token may go to this URL's host."""
        return _origin(url) in self._hosts

    def too_large(self, file: SharedFile) -> bool:
        return file.size is not None and file.size > self._max_bytes

    async def fetch(self, file: SharedFile) -> bytes:
        """The file's bytes; Unreadable for every way it cannot be had."""
        if not file.url:
            raise Unreadable("Slack gave no download URL")
        if not self.allowed(file.url):
            raise Unreadable(f"its URL is not on Slack's file host ({urlsplit(file.url).netloc})")
        if self.too_large(file):
            raise Unreadable(f"{file.size} bytes is over MAX_FILE_MB")
        try:
            async with asyncio.timeout(self._timeout):
                return await self._download(file.url, html=file.is_html)
        except TimeoutError as error:
            raise Unreadable(f"no answer within {self._timeout:g} s") from error
        except httpx.HTTPError as error:
            raise Unreadable(f"{type(error).__name__}: {error}") from error

    async def _download(self, url: str, *, html: bool) -> bytes:
        headers = {"Authorization": f"Bearer {self._token}"}
        async with self._client.stream("GET", url, headers=headers) as response:
            if response.status_code != 200:
                raise Unreadable(f"Slack answered {response.status_code}")
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind == "text/html":
                # Slack's sign-in page, unless the file shared is itself a page: not told apart
                # from it, and not taken either, but no sign that the scope is missing.
                why = "an HTML answer" if html else "Slack's sign-in page, not the file"
                raise Unreadable(why, scope=not html)
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > self._max_bytes:
                raise Unreadable(f"{declared} bytes is over MAX_FILE_MB")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self._max_bytes:
                    raise Unreadable("larger than MAX_FILE_MB")
            return bytes(body)
