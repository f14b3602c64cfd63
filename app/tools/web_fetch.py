"""Fetching one web page for `fetch_url`, safely: GET over http or https only, no cookies, no
credentials of any kind, redirects followed here (each hop checked like the first), a bounded
time, and a bounded number of bytes: at most `max_bytes` read off the wire and at most as many
once decompressed, and nothing after the end of a compressed stream (junk sent after it is
never read, let alone kept). A host's name is used as IDNA gives it (`bücher.de` is asked for,
sent and checked as `xn--bcher-kva.de`).

Every connection goes to an address app.tools.web_guard has checked: the URL's host is
resolved here, each address checked, and the request sent to the checked address itself, with
the name in the Host header and as the TLS server name (so the certificate is still verified
against the name). A DNS answer that changes between the check and the connection (DNS
rebinding) therefore changes nothing.
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from dataclasses import dataclass

import httpx

from app.tools.web_guard import (
    Address,
    Allow,
    Refused,
    Resolve,
    checked_addresses,
    is_public,
    system_resolve,
)

SCHEMES = ("http", "https")
MAX_REDIRECTS = 5
MAX_BYTES = 5_000_000  # of one page, at most: read off the wire, and decompressed
SECONDS = 10.0  # one fetch, redirects included
USER_AGENT = "tomo/1 (a Slack companion reading a page someone shared)"
REDIRECTS = (301, 302, 303, 307, 308)


class FetchFailed(Exception):
    """Why a page could not be fetched, in words the model can pass on."""


@dataclass(frozen=True)
class Page:
    url: str  # where it was found, after redirects
    status: int
    content_type: str  # the media type, lower case, without parameters
    charset: str | None
    data: bytes
    truncated: bool  # more than max_bytes (on the wire or decompressed): only the start was read


class PageFetcher:
    def __init__(
        self,
        *,
        allow: Allow = is_public,
        seconds: float = SECONDS,
        max_bytes: int = MAX_BYTES,
        resolve: Resolve = system_resolve,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        """`verify`: the certificates trusted (the system's; tests give their own)."""
        self._allow = allow
        self._verify = verify
        self._seconds = seconds
        self._max_bytes = max_bytes
        self._resolve = resolve

    async def fetch(self, url: str) -> Page:
        try:
            async with asyncio.timeout(self._seconds):
                return await self._follow(url)
        except TimeoutError as error:
            raise FetchFailed(f"no answer within {self._seconds:g} seconds") from error
        except Refused as error:
            raise FetchFailed(f"refused: {error}") from error
        except httpx.HTTPError as error:
            raise FetchFailed(f"could not fetch it ({type(error).__name__})") from error

    async def _follow(self, url: str) -> Page:
        current = _parsed(url)
        for _ in range(MAX_REDIRECTS + 1):
            page, location = await self._get(current)
            if location is None:
                assert page is not None
                return page
            current = _parsed(str(current.join(location)))
        raise FetchFailed(f"more than {MAX_REDIRECTS} redirects")

    async def _get(self, url: httpx.URL) -> tuple[Page | None, str | None]:
        """One hop: the page, or where it redirects to."""
        port = url.port or (443 if url.scheme == "https" else 80)
        host = url.raw_host.decode("ascii")  # an internationalised name as IDNA writes it
        addresses = await checked_addresses(host, port, allow=self._allow, resolve=self._resolve)
        headers = {
            "Host": _host_header(host, url.port),
            "User-Agent": USER_AGENT,
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate",
        }
        extensions = {"sni_hostname": host} if url.scheme == "https" else {}
        # A client of its own for every hop: no cookie jar carried from one to the next, no
        # proxy or .netrc credentials from the environment.
        async with httpx.AsyncClient(
            trust_env=False, follow_redirects=False, verify=self._verify
        ) as client:
            response = await _connect(client, url, addresses, headers, extensions)
            try:
                if response.status_code in REDIRECTS:
                    location = response.headers.get("location")
                    if not location:
                        raise FetchFailed(f"a redirect ({response.status_code}) to nowhere")
                    return None, location
                if response.status_code >= 400:
                    raise FetchFailed(f"the server answered {response.status_code}")
                data, truncated = await self._read(response)
            finally:
                await response.aclose()
        media = response.headers.get("content-type", "").partition(";")[0]
        return (
            Page(
                url=str(url),
                status=response.status_code,
                content_type=media.strip().lower(),
                charset=response.charset_encoding,
                data=data,
                truncated=truncated,
            ),
            None,
        )

    async def _read(self, response: httpx.Response) -> tuple[bytes, bool]:
        """At most max_bytes of the body off the wire, decompressed here a bounded piece at a
        time (a few compressed kilobytes can inflate to gigabytes) to at most max_bytes; the
        end of a compressed stream ends the page. What comes after is never read."""
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate"):
            raise FetchFailed(f"the page came compressed as {encoding}, which is not read")
        inflate = None if encoding == "identity" else zlib.decompressobj(zlib.MAX_WBITS | 32)
        parts: list[bytes] = []
        size = wire = 0
        async for raw in response.aiter_raw():
            chunk = raw[: self._max_bytes - wire]
            wire += len(chunk)
            if inflate is not None:
                try:
                    chunk = inflate.decompress(chunk, self._max_bytes - size + 1)
                except zlib.error as error:
                    raise FetchFailed("the page's compression is broken") from error
            parts.append(chunk[: self._max_bytes - size])
            size += len(parts[-1])
            if size >= self._max_bytes or wire >= self._max_bytes:
                return b"".join(parts), True
            if inflate is not None and inflate.eof:
                return b"".join(parts), False  # the stream's end: anything after is not the page
        return b"".join(parts), False


async def _connect(
    client: httpx.AsyncClient,
    url: httpx.URL,
    addresses: list[Address],
    headers: dict[str, str],
    extensions: dict[str, str],
) -> httpx.Response:
    """The response from the first checked address that takes the connection (a name may
    resolve to ::1 and 127.0.0.1, of which a server listens on one)."""
    for n, address in enumerate(addresses, start=1):
        pinned = url.copy_with(host=str(address))
        request = client.build_request("GET", pinned, headers=headers, extensions=extensions)
        try:
            return await client.send(request, stream=True)
        except httpx.ConnectError:
            if n == len(addresses):
                raise
    raise Refused("no address to connect to")


def _parsed(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError) as error:
        raise FetchFailed("not a URL") from error
    if parsed.scheme not in SCHEMES:
        raise FetchFailed(f"only http and https URLs are fetched, not {parsed.scheme or '?'}:")
    if not parsed.host:
        raise FetchFailed("the URL has no host")
    if parsed.userinfo:
        raise FetchFailed("URLs with a user name or password are not fetched")
    return parsed


def _host_header(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"
