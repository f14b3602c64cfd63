"""English decision points from the Ubuntu IRC disentanglement corpus (Kummerfeld et al., ACL
2019; github.com/jkkummerfeld/irc-disentanglement, data under CC BY 4.0).

Each annotated log (data/dev, data/test) gives one excerpt. Its stand-in for tomo is the most
active person of the annotated part (not a bot, a nick of three letters or more). A point is
a person's message; it is `speak` when one of the stand-in's next HORIZON messages of the
channel is annotated as a reply to that message or to another message of its conversation (the
connected part of the reply graph), else `silent`. Its addressee is the author of the message
it is annotated as replying to.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from app.eval.labels import kept, kind_at
from app.eval.points import SHOWN_MESSAGES, Excerpt, Line, Point

SOURCE = "Ubuntu IRC disentanglement corpus (Kummerfeld et al., 2019), CC BY 4.0"
HORIZON = 5  # the stand-in's reply must come within this many channel messages
BLOCK = 50  # log lines in an excerpt (system lines dropped)
ANNOTATED_FROM = 1000  # the corpus annotates a log's lines from this one on
_MESSAGE = re.compile(r"^\[(\d\d):(\d\d)\] <([^>]+)> ?(.*)$")
_ACTION = re.compile(r"^\[(\d\d):(\d\d)\] \* (\S+) ?(.*)$")


@dataclass(frozen=True)
class LogLine:
    number: int
    user: str
    text: str
    minute: int  # minutes since the log's day began


def _is_bot(nick: str) -> bool:
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


def _points(
    log: list[LogLine | None], parents: dict[int, set[int]], stand_in: str
) -> dict[int, tuple[bool, tuple[str, ...]]]:
    """number -> (speak, addressees) for every person's message of the annotated part."""
    part = conversations(parents)
    said = [line for line in log if line is not None]
    position = {line.number: i for i, line in enumerate(said)}
    found: dict[int, tuple[bool, tuple[str, ...]]] = {}
    for i, line in enumerate(said):
        if line.number < ANNOTATED_FROM or line.user == stand_in or _is_bot(line.user):
            continue
        thread = part.get(line.number, line.number)
        replies = (
            later
            for later in said[i + 1 : i + 1 + HORIZON]
            if later.user == stand_in
            and any(
                p == line.number or part.get(p, p) == thread for p in parents.get(later.number, ())
            )
        )
        speak = next(replies, None) is not None
        earlier = [p for p in parents.get(line.number, ()) if p in position and p < line.number]
        parent = log[max(earlier)] if earlier else None
        found[line.number] = (speak, (parent.user,) if parent is not None else ())
    return found


def excerpt_from(
    ascii_log: Path, *, rng: random.Random, silent_per_speak: int, most: int
) -> list[Point]:
    """The points of one annotated log: the block of BLOCK lines with the most `speak` points."""
    log = read_log(ascii_log)
    parents = read_links(ascii_log.with_name(ascii_log.name.replace(".ascii.", ".annotation.")))
    active = Counter(
        line.user
        for line in log
        if line is not None
        and line.number >= ANNOTATED_FROM
        and not _is_bot(line.user)
        and len(line.user) >= 3
    )
    stand_in = active.most_common(1)[0][0]
    labelled = _points(log, parents, stand_in)
    stem = ascii_log.name.split(".")[0]
    day = datetime.strptime(stem[:10], "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    best: list[Point] = []
    for start in range(ANNOTATED_FROM - SHOWN_MESSAGES, len(log) - BLOCK, 10):
        block = [line for line in log[start : start + BLOCK] if line is not None]
        excerpt = Excerpt(
            id=f"ubuntu-{stem}-{start}",
            language="en",
            source=f"{SOURCE}: data/{ascii_log.parent.name}/{ascii_log.name}, lines "
            f"{start}-{start + BLOCK - 1}",
            channel="ubuntu",
            stand_in=stand_in,
            messages=tuple(Line(line.user, line.text, day + line.minute * 60) for line in block),
        )
        points = [
            Point(excerpt, i, kind_at(excerpt.messages, i, stand_in), *labelled[line.number])
            for i, line in enumerate(block)
            if i >= SHOWN_MESSAGES - 1 and line.number in labelled
        ]
        if sum(p.speak for p in points) > sum(p.speak for p in best):
            best = points
    return kept(best, rng=rng, silent_per_speak=silent_per_speak, most=most)
