"""The URLs tomo was given while writing one reply, so that `fetch_url` requests only those and
never one the model put together (a URL carrying what a search found is how a page that gives
orders would send it out).

Given is what people wrote in the conversation the reply answers, and what the reply's tools
returned to it, round by round (docs/tools.md#reading-a-page-fetch_url). A URL is read from
that text with or without its scheme (`example.com/a` stands for http and https), inside
Slack's `<url|label>` marks, with Slack's `&amp;` decoded, and where a sentence's punctuation
or Japanese text runs into it, with and without what may be either. Every URL held is thus a
piece of text that was given, never anything longer or different. Two URLs are the same when
scheme, host (lower case, IDNA), port, path and query are, byte for byte as they would be
sent; a trailing slash and the fragment (never sent) do not count.

A tool's result that repeats what the model wrote in the call (a search that says "nothing
found for https://…") gives nothing: a URL in it that is part of the call's own arguments, or
on the host of a URL in them that was not given, is not taken as given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    import httpx


MAX_URL = 2000
MAX_CUTS = 8  # places one reading may end at, where scripts change
SCHEMES = ("http", "https")
# The runs of text a URL may be read from: white space, Slack's `<`, `|`, `>` and quotes end them.
_RUN = re.compile(r"[^\s<>|\"'`]+")
_SCHEME = re.compile(r"https?://", re.IGNORECASE)
# A bare host (no scheme) starts at a letter or digit that follows none of these (so not in
# the middle of a word, a path or a user name), or an opening bracket.
_INSIDE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#@%&=+")
# Marks that end a sentence or a bracket more often than a URL: each reading without them too.
_TRAILING = frozenset(".,;:!?)]}'\"、。，．！？）」』】")  # noqa: RUF001


def _inside(ch: str) -> bool:
    """Whether `ch` before a letter makes it part of a word, a path or a user name (a bare
    host starts after anything else: a space, a bracket, Japanese text)."""
    return ch in _INSIDE or (ch.isalnum() and _script(ch) == 4)


def slack_decoded(text: str) -> str:
    """Text as Slack escapes it (`&amp;`, `&lt;`, `&gt;`), as written."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def url_key(url: str) -> str | None:
    """What two URLs must share to be the same (module doc); None for no http(s) URL."""
    try:
        import httpx  # the job worker's (fetch_url's); the web process never reads a URL

        parsed = httpx.URL(slack_decoded(url.strip()))
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    return _key(parsed)


def _key(url: httpx.URL) -> str | None:
    if url.scheme not in SCHEMES or not url.raw_host:
        return None
    path, question, query = url.raw_path.partition(b"?")
    path = path.removesuffix(b"/")
    port = "" if url.port is None else f":{url.port}"
    host = url.raw_host.decode("ascii").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{url.scheme}://{host}{port}{path.decode('ascii')}{question.decode()}{query.decode()}"


def _readings(text: str) -> Iterator[tuple[str, bool]]:
    """Every piece of `text` that may be a URL: (the piece, whether it has its scheme)."""
    for run in _RUN.finditer(slack_decoded(text)):
        word = run.group()
        if "." not in word and "[" not in word and "://" not in word:
            continue  # no host in it
        starts = {m.start(): True for m in _SCHEME.finditer(word)}
        for i, ch in enumerate(word):
            if ((ch.isascii() and ch.isalnum()) or ch == "[") and (
                i == 0 or not _inside(word[i - 1])
            ):
                starts.setdefault(i, False)
        changes = _changes(word)
        for start, schemed in starts.items():
            for end in _ends(word, start, changes):
                yield word[start:end], schemed


def _changes(word: str) -> list[int]:
    """Where one script gives way to another in `word`."""
    if word.isascii():
        return []
    scripts = [_script(ch) for ch in word]
    return [i for i in range(1, len(word)) if scripts[i] != scripts[i - 1]]


def _ends(word: str, start: int, changes: list[int]) -> set[int]:
    """Where a URL starting at `start` may end: the run's end, where one script gives way to
    another (`https://example.com/aを読んで`, `…/wiki/東京を読んで`), and either without trailing
    punctuation."""
    ends = {len(word), *[i for i in changes if i > start][:MAX_CUTS]}
    stripped = set()
    for end in ends:
        while end > start and word[end - 1] in _TRAILING:
            end -= 1
            stripped.add(end)
    return {e for e in ends | stripped if 0 < e - start <= MAX_URL}


def _script(ch: str) -> int:
    """A coarse script: ASCII, hiragana, katakana, CJK ideographs, anything else."""
    if ch.isascii():
        return 0
    code = ord(ch)
    if 0x3040 <= code <= 0x309F:
        return 1
    if 0x30A0 <= code <= 0x30FF:
        return 2
    if 0x3400 <= code <= 0x9FFF:
        return 3
    return 4


@lru_cache(maxsize=8192)
def _keys(piece: str, schemed: bool) -> tuple[str, ...]:
    """The URL `piece` stands for, as keys: two for a bare one (http and https); none when it
    is none (cached: a conversation's messages are read again for every reply)."""
    if not schemed and not _host_like(piece):
        return ()
    try:
        import httpx

        url = httpx.URL(piece if schemed else f"http://{piece}")
    except (httpx.InvalidURL, TypeError, ValueError):
        return ()
    key = _key(url)
    if key is None or "" in url.host.split("."):
        return ()  # no host, or one with an empty label ("nothing.")
    if schemed:
        return (key,)
    return tuple(f"{scheme}://{key.partition('://')[2]}" for scheme in SCHEMES)


def _host_like(piece: str) -> bool:
    """Whether a piece without a scheme starts with a host: `name.tld` (a top-level domain of
    two letters or more, in any script), an IPv4 address, or `[` an IPv6 one; cheaply, before
    any parsing (most words are no URL)."""
    if piece.startswith("["):
        return True
    host = re.split(r"[/?#:]", piece, maxsplit=1)[0]
    labels = host.split(".")
    if len(labels) < 2 or not all(labels):
        return False
    last = labels[-1]
    return (last.isalpha() and len(last) >= 2) or last.isdigit() or last.startswith("xn--")


def _host(key: str) -> str:
    """The host of a key (`[…]` for IPv6)."""
    rest = key.partition("://")[2]
    if rest.startswith("["):
        return rest[: rest.index("]") + 1]
    return re.split(r"[:/?]", rest, maxsplit=1)[0]


@lru_cache(maxsize=4096)
def _text_keys(text: str) -> frozenset[str]:
    return frozenset(key for piece, schemed in _readings(text) for key in _keys(piece, schemed))


def _echo_form(piece: str, schemed: bool) -> str:
    bare = piece.split("://", 1)[1] if schemed else piece
    return unquote(bare).lower().rstrip("/")


def _composed(arguments: str) -> str:
    """The text of a call's arguments, as an echo would show it: its strings decoded from
    JSON, percent-escapes decoded, lower case."""
    try:
        strings = list(_strings(json.loads(arguments)))
    except ValueError:
        strings = [arguments]
    return unquote(slack_decoded("\n".join(strings))).lower()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


class GivenUrls:
    """The ledger of one reply's run: starts with what people wrote, grows with the results
    of its tools round by round, and is thrown away with the run (a reply run again after a
    restart starts over, and its tools, run again, give it the same)."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self._keys: set[str] = set()
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """Every URL in `text` is given."""
        self._keys |= _text_keys(text)

    def add_result(self, text: str, *, arguments: str) -> None:
        """A tool's result: the URLs in it are given, but for what only repeats the call's
        own arguments where the model wrote them: a URL whose text is part of them (a given
        URL in them aside), or whose host is that of a URL in them that was not given."""
        composed = _composed(arguments)
        tainted: set[str] = set()
        given: list[str] = []
        for piece, schemed in _readings(composed):
            keys = _keys(piece, schemed)
            if keys and self._keys.intersection(keys):
                given.append(piece)
            elif keys:
                tainted.add(_host(keys[0]))
        for piece in sorted(given, key=len, reverse=True):
            composed = composed.replace(piece, " ")
        for piece, schemed in _readings(text):
            echo = _echo_form(piece, schemed)
            keys = _keys(piece, schemed)
            if not keys or (echo and echo in composed) or _host(keys[0]) in tainted:
                continue
            self._keys.update(keys)

    def holds(self, url: str) -> bool:
        key = url_key(url)
        return key is not None and key in self._keys

    def copy(self) -> GivenUrls:
        other = GivenUrls()
        other._keys = set(self._keys)
        return other

    def __len__(self) -> int:
        return len(self._keys)
