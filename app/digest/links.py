"""The model's citations made into links, and no other link let through: the digest's model
cites the numbered messages it was given as `[n]` (`[3]`, `[3][5]`, `[3, 5]`); each number that
names a message becomes a Slack link to that message's permalink, which tomo built from what it
stored, and a number that names none is dropped. Whatever links the model wrote itself
(Markdown links, Slack's `<url|label>`, bare URLs) are reduced to their text first, and
mentions and broadcasts (`<@U…>`, `<!channel>`) to plain text: a digest links only to the
messages it sums up, and pings nobody."""

from __future__ import annotations

import re

_MARKDOWN_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*[^)\s]*(?:\s+\"[^\"]*\")?\s*\)")
_SLACK_TOKEN = re.compile(r"<((?:[@#!]|[a-z][a-z0-9+.-]*:)[^<>|\s]*)(?:\|([^<>\n]*))?>", re.I)
_BARE_URL = re.compile(r"\b(?:https?|ftp|mailto|tel):[^\s<>]*", re.IGNORECASE)
_CITATION = re.compile(r"\[(\s*\d+(?:\s*[,、]\s*\d+)*\s*)\]")


def _label(match: re.Match[str]) -> str:
    label = match.group(1).strip()
    return f"[{label}]" if label.isdigit() else label  # `[3](url)`: still a citation


def _token(match: re.Match[str]) -> str:
    inner, label = match.group(1), match.group(2)
    if label:
        return label
    if inner.startswith("@"):
        return inner  # `<@U123>`: its id, without the ping
    if inner.startswith("!"):
        return inner.removeprefix("!").split("^", 1)[0]  # `<!channel>`: the word
    return ""  # a bare link


def without_links(text: str) -> str:
    """Until nothing changes: taking one link out can join what was around it into another
    (`<<@U1>>` is `<@U1>` once the inner one is text)."""
    while True:
        reduced = _BARE_URL.sub("", _SLACK_TOKEN.sub(_token, _MARKDOWN_LINK.sub(_label, text)))
        if reduced == text:
            return text
        text = reduced


def escape_url(url: str) -> str:
    """A URL inside Slack's `<url|label>`: its control characters as Slack's escapes."""
    return url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E")


def linked(text: str, links: dict[int, str]) -> tuple[str, int, int]:
    """`text` with its citations as links; how many were linked and how many dropped."""
    kept = dropped = 0

    def cite(match: re.Match[str]) -> str:
        nonlocal kept, dropped
        parts = []
        for number in re.split(r"[,、]", match.group(1)):
            url = links.get(int(number))
            if url is None:
                dropped += 1
                continue
            kept += 1
            parts.append(f"<{escape_url(url)}|[{int(number)}]>")
        return "".join(parts)

    return _CITATION.sub(cite, without_links(text)), kept, dropped
