"""Turn an LLM's Markdown reply into Slack mrkdwn chunks that are safe to post."""

import re
import string
from bisect import bisect_right
from collections.abc import Iterator
from functools import partial
from html import escape

ZWSP = "\u200b"
HR = "─" * 10
_escape = partial(escape, quote=False)  # Slack wants only & < > as entities

# Internal sentinels (control characters an LLM reply never contains): \x10-\x17 are
# opening/closing formatting markers, \x18<n>\x19 a stashed piece kept verbatim.
_MARKS = dict(zip("\x10\x11\x12\x13\x14\x15\x16\x17", "**__~~``", strict=True))
_OPENERS = "\x10\x12\x14\x16"
_MARK_RE = re.compile("[\x10-\x17]")
_STASH_RE = re.compile("\x18(\\d+)\x19")
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# Neighbours after which Slack already sees a word boundary next to a marker.
_NO_GAP = set(string.punctuation + ZWSP + "".join(_MARKS)) - set("*_~`")

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_SLACK_TOKEN = re.compile(r"<(?:[@#!][^<>\s|]+|(?:https?|mailto|tel):[^<>\s|]+)(?:\|[^<>\n]*)?>")
_URL = r"((?:[^()\s]|\([^()\s]*\))+)(?:\s+\"[^\"]*\")?"
_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*" + _URL + r"\s*\)")  # links and images
_BARE_URL = re.compile(r"https?://[^\s<>*]*[^\s<>*_~.,;:!?)]")
_BACKSLASH = re.compile(r"\\([!-/:-@\[-`{-~])")


def _delimited(
    mark: str, opener: str, closer: str, *, ascii_edges: bool
) -> tuple[re.Pattern[str], str]:
    d, c = re.escape(mark), re.escape(mark[0])
    pre, post = (r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])") if ascii_edges else ("", "")
    pattern = rf"{pre}(?<!{c}){d}(?=[^\s{c}])(.+?)(?<=[^\s{c}]){d}(?!{c}){post}"
    return re.compile(pattern), opener + r"\1" + closer


_EMPHASIS = [
    _delimited("***", "\x10\x12", "\x13\x11", ascii_edges=False),
    _delimited("___", "\x10\x12", "\x13\x11", ascii_edges=True),
    _delimited("**", "\x10", "\x11", ascii_edges=False),
    _delimited("__", "\x10", "\x11", ascii_edges=True),
    _delimited("~~", "\x14", "\x15", ascii_edges=False),
    _delimited("*", "\x12", "\x13", ascii_edges=True),
    _delimited("_", "\x12", "\x13", ascii_edges=True),
]

_FENCE_OPEN = re.compile(r"^( *)(`{3,}|~{3,})[^`]*$")
_QUOTE = re.compile(r"^ {0,3}>\s?(.*)$")
_HR_RE = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*\d+[.)]\s+)(.*)$")
_TASK = re.compile(r"^\[([ xX])\]\s+")
_TABLE_SEP = re.compile(r"^(?=.*\|)\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_CELL_PROTECT = re.compile(r"`[^`]*`|<[^<>]*>|\\\|")


def _slack_link(url: str, label: str) -> str:
    url = url.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
    label = _escape(re.sub(r"\*\*|__|`", "", label).strip())
    return f"<{url}|{label}>" if label else f"<{url}>"


def _inline(text: str) -> str:
    stash: list[str] = []

    def keep(piece: str) -> str:
        stash.append(piece)
        return f"\x18{len(stash) - 1}\x19"

    text = _CODE_SPAN.sub(lambda m: keep("\x16" + _escape(m[2]) + "\x17"), text)
    text = _SLACK_TOKEN.sub(lambda m: keep(m[0]), text)
    text = _LINK.sub(lambda m: keep(_slack_link(m[2], m[1])), text)
    text = _BARE_URL.sub(lambda m: keep(m[0]), text)
    text = _BACKSLASH.sub(lambda m: keep(_escape(m[1])), text)
    text = _escape(text)
    for pattern, replacement in _EMPHASIS:
        text = pattern.sub(replacement, text)
    while _STASH_RE.search(text):
        text = _STASH_RE.sub(lambda m: stash[int(m[1])], text)
    return text


def _table_cells(row: str) -> list[str]:
    stash: list[str] = []

    def keep(m: re.Match[str]) -> str:
        stash.append("|" if m[0] == "\\|" else m[0])
        return f"\x18{len(stash) - 1}\x19"

    body = _CELL_PROTECT.sub(keep, row.strip().removeprefix("|").removesuffix("|"))
    return [_STASH_RE.sub(lambda m: stash[int(m[1])], cell).strip() for cell in body.split("|")]


def _table_row(row: str, *, header: bool) -> str:
    cells = [_inline(cell) for cell in _table_cells(row)]
    if header:
        cells = [f"\x10{_MARK_RE.sub('', c)}\x11" if c else c for c in cells]
    return " | ".join(cells)


def _block_line(line: str) -> str:
    if not line.strip():
        return ""
    if m := _QUOTE.match(line):
        return ("> " + _block_line(m[1])).rstrip()
    if _HR_RE.match(line):
        return HR
    if m := _HEADING.match(line):
        body = re.sub("[\x10\x11]", "", _inline(m[1]))
        return f"\x10{body}\x11" if body else ""
    if m := _BULLET.match(line):
        item = _TASK.sub(lambda t: "☐ " if t[1] == " " else "☑ ", m[2])
        return f"{m[1]}• {_inline(item)}"
    if m := _NUMBERED.match(line):
        return m[1] + _inline(m[2])
    return _inline(line.rstrip())


def _finalize(text: str) -> str:
    # Slack only honours a marker at a word boundary, which Japanese text lacks:
    # put an invisible space between a marker and an adjacent letter.
    def emit(m: re.Match[str]) -> str:
        i, mark = m.start(), m[0]
        j = i - 1 if mark in _OPENERS else i + 1
        outside = text[j] if 0 <= j < len(text) else " "
        gap = "" if outside.isspace() or outside in _NO_GAP else ZWSP
        return gap + _MARKS[mark] if mark in _OPENERS else _MARKS[mark] + gap

    return _MARK_RE.sub(emit, text)


def to_mrkdwn(markdown: str) -> str:
    """Convert GitHub-flavoured Markdown to Slack mrkdwn.

    Code spans and fenced blocks keep their text (only ``&``, ``<`` and ``>`` are
    entity-escaped, as Slack requires everywhere); existing Slack tokens such as
    ``<@U123>`` or ``<https://x|y>`` pass through untouched.
    """
    text = markdown.replace("\r\n", "\n").replace("\r", "\n")
    lines = _CONTROL_RE.sub("", text).split("\n")
    out: list[str] = []
    fence: tuple[str, str] | None = None  # (indent, marker) of the open code block
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            indent, marker = fence
            if re.fullmatch(rf" *{re.escape(marker[0])}{{{len(marker)},}}\s*", line):
                out.append("```")
                fence = None
            else:
                out.append(_escape(line.removeprefix(indent)))
        elif m := _FENCE_OPEN.match(line):
            fence = (m[1], m[2])
            out.append("```")
        elif "|" in line and _TABLE_SEP.match(lines[i + 1] if i + 1 < len(lines) else ""):
            out.append(_table_row(line, header=True))
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                out.append(_table_row(lines[i], header=False))
                i += 1
            continue
        else:
            out.append(_block_line(line))
        i += 1
    if fence is not None:
        out.append("```")
    return _finalize("\n".join(out)).strip("\n")


_SPECIAL_MENTION = re.compile(r"<!([^<>|\s]+)(?:\|([^<>]*))?>")
_BARE_BROADCAST = re.compile(r"(?<![A-Za-z0-9._%+-])@(channel|here|everyone)(?![A-Za-z0-9_])", re.I)


def _defuse(m: re.Match[str]) -> str:
    name, label = m[1], m[2]
    if name.startswith("date^"):
        return m[0]  # date formatting, not a ping
    text = (label or "").lstrip("@") or name.removeprefix("subteam^")
    return f"@{ZWSP}{text}"


def neutralize_broadcasts(text: str) -> str:
    """Make @channel/@here/@everyone and user-group pings plain, non-pinging text.

    ``<!here>``-style tokens (with or without a ``|label``) and ``<!subteam^S1>``
    become ``@<ZWSP>name``; bare ``@here`` words get a U+200B after the ``@``.
    User mentions such as ``<@U123>`` are left alone.
    """
    text = _SPECIAL_MENTION.sub(_defuse, text)
    return _BARE_BROADCAST.sub(lambda m: f"@{ZWSP}{m[1]}", text)


_KEPT_BREAKS = "\u3002\uff01\uff1f\u3001"  # Japanese full stop, !, ?, comma
_SOFT_BREAKS = ("\n\n", "\n", " ", *_KEPT_BREAKS)
_ATOM = re.compile(r"<[^<>\n]*>|&#?\w+;|`+")  # pieces a hard cut must not tear
_FENCE_LEN = len("\n```")


def _break_points(text: str, sep: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    # (end of this chunk, start of the next), right to left, with lo <= end <= hi.
    kept = sep in _KEPT_BREAKS
    p = text.rfind(sep, 0, hi if kept else hi + len(sep))
    while p >= 0:
        end = p + 1 if kept else p
        if end < lo:
            return
        yield end, p + len(sep)
        p = text.rfind(sep, 0, p + len(sep) - 1)


def _find_cut(text: str, limit: int) -> tuple[int, int, bool]:
    fence_ends = [m.end() for m in re.finditer("```", text[: limit + 3])]

    def in_code(p: int) -> bool:
        return bisect_right(fence_ends, p) % 2 == 1

    for lo in (limit // 2, 1):
        for sep in _SOFT_BREAKS:
            for end, start in _break_points(text, sep, lo, limit):
                if not in_code(end):
                    return end, start, False
    budget = limit - _FENCE_LEN
    for sep in ("\n", " "):
        for end, start in _break_points(text, sep, 1, budget):
            if in_code(end) and text[text.rfind("```", 0, end) + 3 : end].strip():
                return end, start, True
    end = budget if in_code(limit) else limit
    for m in _ATOM.finditer(text, 0, end + 1000):
        if m.start() < end < m.end() and m.start() > limit // 2:
            end = m.start()
    if in_code(end):
        end = min(end, budget)
    return end, end, in_code(end)


def split_message(text: str, *, limit: int = 3900) -> list[str]:
    """Split text into non-empty chunks of at most ``limit`` characters.

    Prefers paragraph breaks, then line breaks, then spaces or Japanese punctuation,
    and hard-cuts as a last resort. A code block that must be split is closed at the
    end of one chunk and reopened at the start of the next. Blank text gives ``[]``.
    """
    if limit < 16:
        raise ValueError("limit must be at least 16")
    chunks: list[str] = []
    rest = text.strip("\n").rstrip()
    while len(rest) > limit:
        end, start, in_code = _find_cut(rest, limit)
        chunk, rest = rest[:end].rstrip(), rest[start:].lstrip("\n")
        if in_code:
            chunk = "" if chunk == "```" else chunk + "\n```"
            closing = rest.lstrip().startswith("```")  # nothing left of this block
            rest = rest.lstrip()[3:].lstrip("\n") if closing else "```\n" + rest
        chunks.append(chunk)
    chunks.append(rest)
    return [chunk for chunk in chunks if chunk.strip()]


def format_reply(markdown: str, *, limit: int = 3900) -> list[str]:
    """Convert an LLM reply to mrkdwn, defuse broadcast pings and split it for posting."""
    return split_message(neutralize_broadcasts(to_mrkdwn(markdown)), limit=limit)
