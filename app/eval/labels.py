"""The rules that turn a corpus's annotations into decision points (eval/README.md says them in
words): which kind of point a message is, and how a point's silent examples are thinned.

The kind follows tomo's own rule for a channel's top level (app.conversation.timing.participation):
a
conversation tomo takes part in is one where its post is among the last TOP_LEVEL_TURNS turns
(one person's consecutive messages are one turn) and within the follow-up window.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.conversation.timing.participation import TOP_LEVEL_SCAN, TOP_LEVEL_TURNS
from app.eval.points import SHOWN_MESSAGES, LabelRule, Line, Point

FOLLOW_UP_WINDOW_SECONDS = 1800.0  # the setting's default
FOLLOWING = 5  # messages kept after an excerpt's last point, so a reader sees what came next


@dataclass(frozen=True)
class Label:
    """A message's label as a builder's rule found it; `answer` the position in the corpus
    (a log's line, a dialogue's message) of the stand-in's message that answered it."""

    speak: bool
    rule: LabelRule
    addressees: tuple[str, ...] = ()
    answer: int | None = None


def kind_at(messages: Sequence[Line], index: int, stand_in: str) -> str:
    """`follow_up` when the stand-in's message is among the last turns before and with
    `messages[index]` (and recent enough), else `join`."""
    turns, speaker = 0, None
    newest = messages[index].at
    for line in reversed(messages[max(0, index - TOP_LEVEL_SCAN + 1) : index + 1]):
        if line.user != speaker:
            turns, speaker = turns + 1, line.user
        if turns > TOP_LEVEL_TURNS:
            return "join"
        if line.user == stand_in:
            return "follow_up" if newest - line.at <= FOLLOW_UP_WINDOW_SECONDS else "join"
    return "join"


def thinned(points: list[Point], *, rng: random.Random, silent_per_speak: int) -> list[Point]:
    """Every `speak` point, and per kind at most `silent_per_speak` silent points for each speak
    point (at least two), drawn with `rng`; in their original order."""
    kept: list[Point] = []
    for kind in ("join", "follow_up"):
        speak = [p for p in points if p.kind == kind and p.speak]
        silent = [p for p in points if p.kind == kind and not p.speak]
        room = max(2, silent_per_speak * len(speak))
        kept += speak + (rng.sample(silent, room) if len(silent) > room else silent)
    return sorted(kept, key=lambda p: p.index)


def kept(
    points: list[Point], *, rng: random.Random, silent_per_speak: int, most: int
) -> list[Point]:
    """The points an excerpt keeps (thinned, then at most `most` drawn with `rng`), and the
    excerpt cut to the messages they show and what came next (FOLLOWING messages after the
    last point, and every kept answer), their indexes moved with it."""
    chosen = thinned(points, rng=rng, silent_per_speak=silent_per_speak)
    if len(chosen) > most:
        chosen = sorted(rng.sample(chosen, most), key=lambda p: p.index)
    if not chosen:
        return []
    first = max(0, chosen[0].index - SHOWN_MESSAGES + 1)
    last = max([chosen[-1].index + FOLLOWING] + [p.answer or 0 for p in chosen])
    excerpt = chosen[0].excerpt
    cut = replace(excerpt, messages=excerpt.messages[first : last + 1])
    return [
        replace(
            p,
            excerpt=cut,
            index=p.index - first,
            answer=None if p.answer is None else p.answer - first,
        )
        for p in chosen
    ]
