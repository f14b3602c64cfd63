"""The labelled decision points (eval/README.md): conversation excerpts from public corpora, each
with the points where a participant standing in for tomo spoke or stayed silent.

A data file holds one excerpt a line (JSON):

    {"id", "language", "source", "channel", "stand_in",
     "messages": [{"user", "text", "at"}],
     "points": [{"index", "kind", "label", "label_source", "rule", "addressees", "answer"}]}

`at` is a Unix time; a point's `index` is its newest message (the one a judgment would weigh),
`kind` `join` (a conversation the stand-in is not part of) or `follow_up` (one it is part of:
its message is among the last few turns), `label` `speak` or `silent` (whether the stand-in
answered that message), `label_source` how the label was made (`annotated`: from a corpus's
human reply annotation; `rule`: from a rule over what people wrote), `rule` which of the
builders' rules (`LabelRule`) gave it, `answer` (where the excerpt holds it) the stand-in's
message that answered it, `addressees` whom the newest message is addressed to,
where the corpus says.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.db.migrate import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "eval"
# The channel messages shown before and with a point's newest message.
SHOWN_MESSAGES = 15
KINDS = ("join", "follow_up")
LANGUAGES = ("en", "ja")  # the set's languages; the report has a part for each, always
LABELS = ("speak", "silent")


class LabelSource(StrEnum):
    """How a point's label was made."""

    ANNOTATED = "annotated"  # people annotated which message answers which
    RULE = "rule"  # a rule over what people wrote (eval/README.md states it)


class LabelRule(StrEnum):
    """The builders' rules (eval/README.md says each in words), each of one label source."""

    LINKED_ANSWER = "linked_answer"  # en speak: the stand-in's message annotated as its answer
    NEVER_ANSWERED = "never_answered"  # en silent: no message of the stand-in answers it
    MENTION_ANSWER = "mention_answer"  # ja speak: the stand-in @-mentions its writer soon after
    ADDRESSED_NEXT = "addressed_next"  # ja speak: it @-mentions the stand-in, who writes next
    NO_REPLY = "no_reply"  # ja silent: the stand-in writes nothing for a while after it

    @property
    def source(self) -> LabelSource:
        annotated = (LabelRule.LINKED_ANSWER, LabelRule.NEVER_ANSWERED)
        return LabelSource.ANNOTATED if self in annotated else LabelSource.RULE


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
    label_source: LabelSource
    addressees: tuple[str, ...] = ()
    rule: LabelRule | None = None
    answer: int | None = None  # the stand-in's message that answers it, where the excerpt has it

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
                    "label_source": p.label_source.value,
                    **({"rule": p.rule.value} if p.rule is not None else {}),
                    "addressees": list(p.addressees),
                    **({"answer": p.answer} if p.answer is not None else {}),
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
    if data.get("label_source") not in tuple(LabelSource):
        raise ValueError(f"point {index}: label_source must be one of {', '.join(LabelSource)}")
    rule = LabelRule(data["rule"]) if data.get("rule") is not None else None
    if rule is not None and rule.source != data["label_source"]:
        raise ValueError(f"point {index}: rule {rule} is not a {data['label_source']} rule")
    answer = data.get("answer")
    if answer is not None and (
        not isinstance(answer, int)
        or not index < answer < len(excerpt.messages)
        or excerpt.messages[answer].user != excerpt.stand_in
    ):
        raise ValueError(f"point {index}: answer {answer!r} is not a later stand-in message")
    return Point(
        excerpt=excerpt,
        index=index,
        kind=kind,
        speak=label == "speak",
        addressees=tuple(str(a) for a in data.get("addressees") or ()),
        label_source=LabelSource(data["label_source"]),
        rule=rule,
        answer=answer,
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


def breakdown(points: Sequence[Point]) -> dict[str, dict[str, list[int]]]:
    """The report's parts, as positions in `points`: `by_kind` (every kind) and `by_language`
    (LANGUAGES, and after them any other language the points are in)."""
    others = sorted({p.excerpt.language for p in points} - set(LANGUAGES))
    return {
        "by_kind": {k: [i for i, p in enumerate(points) if p.kind == k] for k in KINDS},
        "by_language": {
            language: [i for i, p in enumerate(points) if p.excerpt.language == language]
            for language in (*LANGUAGES, *others)
        },
    }


def load_points(paths: Iterable[Path] | None = None) -> list[Point]:
    """Every point of the given data files (default: every `*.jsonl` under eval/), in order."""
    files = sorted(DATA_DIR.glob("*/*.jsonl")) if paths is None else list(paths)
    if not files:
        raise DataError(f"no data files found (looked in {DATA_DIR})")
    return [point for path in files for point in read_points(path)]
