"""English decision points from the Ubuntu IRC disentanglement corpus (Kummerfeld et al., ACL
2019; github.com/jkkummerfeld/irc-disentanglement, data under CC BY 4.0), whose annotators
linked each message to the message(s) it replies to.

Each annotated log (data/dev, data/test) gives an excerpt for each of its STAND_INS busiest
helpers (`helpers`: people who mostly answer others, not those asking). A point is a person's
message that ends their turn (the channel's next message is someone else's), outside the
conversations the stand-in began. Its label comes from the annotation alone (`labels`):
`speak` when a message of the stand-in is annotated as a reply to it or to an earlier line of
the same turn, `silent` when none is; left out when the annotation cannot decide. Its
addressee is the author of the message its turn is annotated as replying to.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from app.eval.irc_log import (
    ANNOTATED_FROM,
    LogLine,
    conversations,
    is_bot,
    read_links,
    read_log,
)
from app.eval.labels import Label, kept, kind_at
from app.eval.points import SHOWN_MESSAGES, Excerpt, LabelRule, LabelSource, Line, Point

SOURCE = "Ubuntu IRC disentanglement corpus (Kummerfeld et al., 2019), CC BY 4.0"
STAND_INS = 2  # excerpts a log gives, one a helper
HELPING_SHARE = 2 / 3  # a helper's lines in conversations others began: more than this share
HORIZON_MINUTES = 5  # an answer to the author's next line within this long: undecidable
BLOCK = 50  # log lines an excerpt's points come from (system lines dropped)
AFTER = 30  # log lines after them an excerpt may keep (what came next, answers)


def _starters(said: Sequence[LogLine], part: dict[int, int]) -> dict[int, str]:
    """conversation -> the person whose line began it."""
    starter: dict[int, str] = {}
    for line in said:
        starter.setdefault(part.get(line.number, line.number), line.user)
    return starter


def helpers(log: Sequence[LogLine | None], parents: dict[int, set[int]]) -> list[str]:
    """The annotated part's people who help, most helpful first: those with more than
    HELPING_SHARE of their lines in conversations someone else began (not the people asking),
    ranked by how many such conversations they took part in; no bots, nicks of three letters
    or more."""
    part = conversations(parents)
    said = [line for line in log if line is not None]
    starter = _starters(said, part)
    joined: dict[str, set[int]] = {}
    lines: Counter[str] = Counter()
    helping: Counter[str] = Counter()
    for line in said:
        if line.number < ANNOTATED_FROM or is_bot(line.user) or len(line.user) < 3:
            continue
        conversation = part.get(line.number, line.number)
        lines[line.user] += 1
        if starter[conversation] != line.user:
            joined.setdefault(line.user, set()).add(conversation)
            helping[line.user] += 1
    ranked = sorted(joined, key=lambda user: (-len(joined[user]), -lines[user], user))
    return [user for user in ranked if helping[user] > HELPING_SHARE * lines[user]]


def _turn(said: Sequence[LogLine], i: int, part: dict[int, int]) -> set[int]:
    """`said[i]` and its author's lines before it in its conversation, back to another
    person's line there: the line numbers of the author's turn."""
    line = said[i]
    conversation = part.get(line.number, line.number)
    turn = {line.number}
    for earlier in reversed(said[:i]):
        if part.get(earlier.number, earlier.number) != conversation:
            continue
        if earlier.user != line.user:
            break
        turn.add(earlier.number)
    return turn


def _label(
    said: Sequence[LogLine],
    i: int,
    *,
    parents: dict[int, set[int]],
    part: dict[int, int],
    stand_in: str,
) -> Label | None:
    """The label of `said[i]` (a person's line ending their turn), or None when undecidable:
    the stand-in answered a later line of the same author in the same conversation within
    HORIZON_MINUTES instead (the author went on first), or the log ends within that time."""
    line = said[i]
    conversation = part.get(line.number, line.number)
    turn = _turn(said, i, part)
    went_on: set[int] = set()  # the author's later lines in the conversation
    undecidable = said[-1].minute - line.minute < HORIZON_MINUTES
    for later in said[i + 1 :]:
        if later.user == line.user and part.get(later.number, later.number) == conversation:
            went_on.add(later.number)
        if later.user != stand_in:
            continue
        answered = parents.get(later.number, set())
        if answered & turn:
            return Label(True, LabelRule.LINKED_ANSWER, answer=later.number)
        if answered & went_on and later.minute - line.minute <= HORIZON_MINUTES:
            undecidable = True
    return None if undecidable else Label(False, LabelRule.NEVER_ANSWERED)


def labels(
    log: Sequence[LogLine | None], parents: dict[int, set[int]], stand_in: str
) -> dict[int, Label]:
    """line number -> label, for every decidable point of the annotated part outside the
    conversations the stand-in began; a point's addressee is the author of the latest message
    (someone else's) that its turn is annotated as replying to."""
    said = [line for line in log if line is not None]
    part = conversations(parents)
    starter = _starters(said, part)
    found: dict[int, Label] = {}
    for i, line in enumerate(said):
        if line.number < ANNOTATED_FROM or line.user == stand_in or is_bot(line.user):
            continue
        if starter[part.get(line.number, line.number)] == stand_in:
            continue  # the stand-in asking for help: not a helper's decision
        if i + 1 < len(said) and said[i + 1].user == line.user:
            continue  # the turn goes on: no judgment is made here
        label = _label(said, i, parents=parents, part=part, stand_in=stand_in)
        if label is None:
            continue
        replied = [
            replied_to
            for number in _turn(said, i, part)
            for replied_to in parents.get(number, ())
            if (parent := log[replied_to]) is not None and parent.user != line.user
        ]
        parent = log[max(replied)] if replied else None
        addressees = (parent.user,) if parent is not None else ()
        found[line.number] = replace(label, addressees=addressees)
    return found


def excerpts_from(
    ascii_log: Path, *, rng: random.Random, silent_per_speak: int, most: int
) -> list[list[Point]]:
    """One excerpt for each of the log's first STAND_INS helpers: the block of BLOCK lines with
    the most `speak` points for that helper, blocks not overlapping."""
    log = read_log(ascii_log)
    parents = read_links(ascii_log.with_name(ascii_log.name.replace(".ascii.", ".annotation.")))
    stem = ascii_log.name.split(".")[0]
    day = datetime.strptime(stem[:10], "%Y-%m-%d").replace(tzinfo=UTC).timestamp()
    taken: set[int] = set()
    found: list[list[Point]] = []
    for stand_in in helpers(log, parents)[:STAND_INS]:
        labelled = labels(log, parents, stand_in)
        best: list[Point] = []
        best_start = 0
        for start in range(ANNOTATED_FROM - SHOWN_MESSAGES, len(log) - BLOCK, 10):
            if taken & set(range(start, start + BLOCK)):
                continue
            lines = [line for line in log[start : start + BLOCK + AFTER] if line is not None]
            excerpt = Excerpt(
                id=f"ubuntu-{stem}-{start}",
                language="en",
                source=f"{SOURCE}: data/{ascii_log.parent.name}/{ascii_log.name}, lines "
                f"{start}-{min(len(log), start + BLOCK + AFTER) - 1}",
                channel="ubuntu",
                stand_in=stand_in,
                messages=tuple(Line(ln.user, ln.text, day + ln.minute * 60) for ln in lines),
            )
            at = {line.number: i for i, line in enumerate(lines)}
            points = [
                _point(excerpt, i, labelled[line.number], at)
                for i, line in enumerate(lines)
                if i >= SHOWN_MESSAGES - 1
                and line.number < start + BLOCK
                and line.number in labelled
            ]
            if sum(p.speak for p in points) > sum(p.speak for p in best):
                best, best_start = points, start
        if best:
            taken |= set(range(best_start, best_start + BLOCK))
            found.append(kept(best, rng=rng, silent_per_speak=silent_per_speak, most=most))
    return found


def _point(excerpt: Excerpt, index: int, label: Label, at: dict[int, int]) -> Point:
    return Point(
        excerpt,
        index,
        kind_at(excerpt.messages, index, excerpt.stand_in),
        label.speak,
        LabelSource.ANNOTATED,
        addressees=label.addressees,
        rule=label.rule,
        answer=None if label.answer is None else at.get(label.answer),
    )
