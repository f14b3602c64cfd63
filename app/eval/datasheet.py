"""The data README's generated part (eval/README.md, between its markers): per language, how
many points each labelling rule gave, and a seeded sample of points with what was said before
and after each, so a reader can judge the rules themselves. `python -m app.eval.build` writes
it; a test checks that the committed README matches the committed data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from app.eval.points import KINDS, Line, Point
from app.eval.sample import stratified

BEGIN = "<!-- begin: written by python -m app.eval.build from the data files -->"
END = "<!-- end: written by python -m app.eval.build -->"
SAMPLED = 20
BEFORE = 5  # messages shown before a sampled point
AFTER = 5  # and after it (further to its answer, when that comes later)
WIDTH = 150  # a message's text is cut at this many characters


def _counts(points: Sequence[Point]) -> list[str]:
    rows = [
        "| language | rule | label source | label | join | follow_up | points |",
        "|---|---|---|---|---|---|---|",
    ]
    groups = Counter(
        (p.excerpt.language, str(p.rule or "-"), str(p.label_source), p.speak, p.kind)
        for p in points
    )
    for language in sorted({p.excerpt.language for p in points}):
        mine = [p for p in points if p.excerpt.language == language]
        keys = sorted({(str(p.rule or "-"), str(p.label_source), p.speak) for p in mine})
        for rule, source, speak in sorted(keys, key=lambda k: (not k[2], k[0])):
            per_kind = [groups[(language, rule, source, speak, kind)] for kind in KINDS]
            label = "speak" if speak else "silent"
            cells = " | ".join(str(n) for n in per_kind)
            rows.append(
                f"| {language} | `{rule}` | {source} | {label} | {cells} | {sum(per_kind)} |"
            )
        per_kind = [sum(p.kind == kind for p in mine) for kind in KINDS]
        excerpts = len({p.excerpt.id for p in mine})
        cells = " | ".join(str(n) for n in per_kind)
        rows.append(
            f"| {language} | all ({excerpts} excerpts) | | | {cells} | **{sum(per_kind)}** |"
        )
    return rows


def _line(line: Line, *, stand_in: str, mark: str, note: str = "") -> str:
    name = f"{line.user}*" if line.user == stand_in else line.user
    text = " ".join(line.text.split())
    text = text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"
    return f"{mark} {name}: {text}{note}"


def _example(point: Point) -> list[str]:
    excerpt, index = point.excerpt, point.index
    label = "speak" if point.speak else "silent"
    rule = f", `{point.rule}`" if point.rule is not None else ""
    addressed = f"; addressed to {', '.join(point.addressees)}" if point.addressees else ""
    head = (
        f"**{excerpt.id}#{index}** ({excerpt.language}, {point.kind}): **{label}** "
        f"({point.label_source}{rule}){addressed}. The stand-in is {excerpt.stand_in}*."
    )
    shown = [
        _line(line, stand_in=excerpt.stand_in, mark=" ")
        for line in excerpt.messages[max(0, index - BEFORE) : index]
    ]
    shown.append(_line(excerpt.messages[index], stand_in=excerpt.stand_in, mark=">"))
    last = min(len(excerpt.messages) - 1, max(index + AFTER, point.answer or 0))
    for at in range(index + 1, last + 1):
        if index + AFTER < at < (point.answer or 0):
            if at == index + AFTER + 1:
                shown.append("  …")
            continue
        note = "   <- its answer" if at == point.answer else ""
        shown.append(_line(excerpt.messages[at], stand_in=excerpt.stand_in, mark=" ", note=note))
    return [head, "", "```text", *shown, "```", ""]


def datasheet(points: Sequence[Point]) -> str:
    """The generated part of eval/README.md, markers included."""
    lines = [BEGIN, "", "### The points, counted", "", *_counts(points), ""]
    lines += [
        f"### {SAMPLED} points drawn at random",
        "",
        f"Drawn as `--limit {SAMPLED}` draws them (spread over languages and kinds, seeded). "
        f"`>` marks the point's message, `*` the stand-in; {BEFORE} messages before it and "
        f"{AFTER} after it are shown (the judgment sees the 14 before), and the stand-in's "
        "answer where the rule found one.",
        "",
    ]
    for point in stratified(points, SAMPLED):
        lines += _example(point)
    return "\n".join([*lines, END])


def with_datasheet(readme: str, points: Sequence[Point]) -> str:
    """`readme` with its generated part replaced; ValueError if it has no markers."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise ValueError("the README has no generated part (its markers are missing)")
    return readme[:start] + datasheet(points) + readme[end + len(END) :]


def write_datasheet(path: Path, points: Sequence[Point]) -> None:
    path.write_text(with_datasheet(path.read_text(encoding="utf-8"), points), encoding="utf-8")
