"""Reading the Ubuntu IRC disentanglement corpus (github.com/jkkummerfeld/irc-disentanglement,
data/README.md): a log's `.ascii.txt` lines, its `.annotation.txt` reply links ("parent child
-", a message linked to itself beginning a conversation), and the conversations they make."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ANNOTATED_FROM = 1000  # the corpus annotates a log's lines from this one on
_MESSAGE = re.compile(r"^\[(\d\d):(\d\d)\] <([^>]+)> ?(.*)$")
_ACTION = re.compile(r"^\[(\d\d):(\d\d)\] \* (\S+) ?(.*)$")


@dataclass(frozen=True)
class LogLine:
    number: int
    user: str
    text: str
    minute: int  # minutes since the log's day began


def is_bot(nick: str) -> bool:
    return nick.lower().startswith("ubot") or "bot" in nick.lower()


def read_log(path: Path) -> list[LogLine | None]:
    """The log's lines, system lines (joins, parts) as None; times roll over midnight."""
    lines: list[LogLine | None] = []
    day, last = 0, 0
    for number, raw in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
        found = _MESSAGE.match(raw) or _ACTION.match(raw)
        if not found:
            lines.append(None)
            continue
        minute = int(found.group(1)) * 60 + int(found.group(2))
        if minute + day < last - 600:
            day += 1440
        last = minute + day
        text = found.group(4) if found.re is _MESSAGE else f"_{found.group(4)}_"
        lines.append(LogLine(number, found.group(3), text, last))
    return lines


def read_links(path: Path) -> dict[int, set[int]]:
    """child -> its annotated parents (a self-link, a conversation's start, left out)."""
    parents: dict[int, set[int]] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        fields = raw.split()
        if len(fields) >= 2:
            parent, child = int(fields[0]), int(fields[1])
            if parent != child:
                parents.setdefault(child, set()).add(parent)
    return parents


def conversations(parents: dict[int, set[int]]) -> dict[int, int]:
    """Each linked message's conversation (a representative of its connected part)."""
    root: dict[int, int] = {}

    def find(node: int) -> int:
        root.setdefault(node, node)
        while root[node] != node:
            root[node] = root[root[node]]
            node = root[node]
        return node

    for child, linked in parents.items():
        for parent in linked:
            root[find(child)] = find(parent)
    return {node: find(node) for node in list(root)}
