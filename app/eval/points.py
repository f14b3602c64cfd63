"""The labelled decision points (eval/README.md): conversation excerpts from public corpora, each
with the points where a participant standing in for tomo spoke or stayed silent.

A data file holds one excerpt a line (JSON):

    {"id", "language", "source", "channel", "stand_in",
     "messages": [{"user", "text", "at"}],
     "points": [{"index", "kind", "label", "addressees"}]}

`at` is a Unix time; a point's `index` is its newest message (the one a judgment would weigh),
`kind` `join` (a conversation the stand-in is not part of) or `follow_up` (one it is part of:
its message is among the last few turns), `label` `speak` or `silent` (what the stand-in did
next), `addressees` whom the newest message is addressed to, where the corpus says.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.db.migrate import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "eval"
# The channel messages shown before and with a point's newest message.
SHOWN_MESSAGES = 15
KINDS = ("join", "follow_up")
LABELS = ("speak", "silent")


class DataError(ValueError):
    """A data file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Line:
    user: str
    text: str
    at: float


@dataclass(frozen=True)
class Excerpt:
    id: str
    language: str
    source: str
    channel: str
    stand_in: str
    messages: tuple[Line, ...]


@dataclass(frozen=True)
class Point:
    excerpt: Excerpt
    index: int
    kind: str
    speak: bool
    addressees: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.excerpt.id}#{self.index}"

    @property
    def addressed_to_stand_in(self) -> bool:
        return self.excerpt.stand_in in self.addressees

    def shown(self) -> tuple[Line, ...]:
        """The messages a judgment sees, oldest first, the point's newest message last."""
        return self.excerpt.messages[max(0, self.index - SHOWN_MESSAGES + 1) : self.index + 1]


def excerpt_json(excerpt: Excerpt, points: Iterable[Point]) -> str:
    return json.dumps(
        {
            "id": excerpt.id,
            "language": excerpt.language,
            "source": excerpt.source,
            "channel": excerpt.channel,
            "stand_in": excerpt.stand_in,
            "messages": [{"user": m.user, "text": m.text, "at": m.at} for m in excerpt.messages],
            "points": [
                {
                    "index": p.index,
                    "kind": p.kind,
                    "label": "speak" if p.speak else "silent",
                    "addressees": list(p.addressees),
                }
                for p in points
            ],
        },
        ensure_ascii=False,
    )


def _excerpt(data: dict[str, Any]) -> tuple[Excerpt, list[dict[str, Any]]]:
    messages = tuple(
        Line(user=str(m["user"]), text=str(m["text"]), at=float(m["at"])) for m in data["messages"]
    )
    excerpt = Excerpt(
        id=str(data["id"]),
        language=str(data["language"]),
        source=str(data["source"]),
        channel=str(data["channel"]),
        stand_in=str(data["stand_in"]),
        messages=messages,
    )
    return excerpt, list(data["points"])


def _point(excerpt: Excerpt, data: dict[str, Any]) -> Point:
    index, kind, label = data["index"], data["kind"], data["label"]
    if not isinstance(index, int) or not 0 <= index < len(excerpt.messages):
        raise ValueError(f"point index {index!r} is not a message of the excerpt")
    if kind not in KINDS or label not in LABELS:
        raise ValueError(f"unknown kind {kind!r} or label {label!r}")
    if excerpt.messages[index].user == excerpt.stand_in:
        raise ValueError(f"point {index} is the stand-in's own message")
    return Point(
        excerpt=excerpt,
        index=index,
        kind=kind,
        speak=label == "speak",
        addressees=tuple(str(a) for a in data.get("addressees") or ()),
    )


def read_points(path: Path) -> Iterator[Point]:
    """The points of one data file, in order; DataError names the first bad line."""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            excerpt, points = _excerpt(json.loads(raw))
            parsed = [_point(excerpt, p) for p in points]
        except (ValueError, KeyError, TypeError) as error:
            raise DataError(f"{path}:{number}: {error}") from None
        yield from parsed


def load_points(paths: Iterable[Path] | None = None) -> list[Point]:
    """Every point of the given data files (default: every `*.jsonl` under eval/), in order."""
    files = sorted(DATA_DIR.glob("*/*.jsonl")) if paths is None else list(paths)
    if not files:
        raise DataError(f"no data files found (looked in {DATA_DIR})")
    return [point for path in files for point in read_points(path)]
