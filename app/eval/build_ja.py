"""Japanese decision points from the Multi-Relational Multi-Party Chat Corpus (Tsuda et al.,
2025; github.com/nu-dialogue/multi-relational-multi-party-chat-corpus, CC BY-SA 4.0): text
chats of three people, each message's `mention_to` naming whom its writer @-mentioned.

The corpus has no reply annotation, so labels come from a rule over what people wrote
(`label_of`; eval/README.md states it). Each chosen dialogue is one excerpt; one of its three
people, drawn at random, stands in for tomo. A point is another person's message that ends
their turn (the next message is someone else's). Its addressees are the @-mentions of its
writer's turn. The corpus has no times: messages are given one every MESSAGE_SECONDS.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.eval.labels import Label, kept, kind_at
from app.eval.points import SHOWN_MESSAGES, Excerpt, LabelRule, LabelSource, Line, Point

SOURCE = "Multi-Relational Multi-Party Chat Corpus (Tsuda et al., 2025), CC BY-SA 4.0"
MESSAGE_SECONDS = 20.0
START = datetime(2025, 1, 15, 12, 0, tzinfo=UTC).timestamp()
CHANNEL = "雑談"
SPAN = 30  # an excerpt's points are among this many consecutive messages
WINDOW = 3  # the messages after a point in which the stand-in's answer is looked for


def _mentions(utterance: dict[str, Any]) -> set[str]:
    return set(utterance.get("mention_to") or ())


def turn_of(utterances: Sequence[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """The writer's consecutive messages ending with `utterances[index]`."""
    writer = utterances[index]["interlocutor_id"]
    start = index
    while start > 0 and utterances[start - 1]["interlocutor_id"] == writer:
        start -= 1
    return list(utterances[start : index + 1])


def label_of(utterances: Sequence[dict[str, Any]], index: int, stand_in: str) -> Label | None:
    """The label of the turn ending with `utterances[index]` (another person's), or None when
    the rule cannot decide:
    - speak (`addressed_next`): the writer's turn @-mentions the stand-in and the stand-in
      writes the next message, @-mentioning no one else;
    - speak (`mention_answer`): within the next WINDOW messages, before the writer writes
      again, the stand-in writes a message @-mentioning the writer;
    - silent (`no_reply`): the stand-in writes nothing in the next WINDOW messages, and its
      first message after them does not @-mention the writer (that could be a late answer);
    - otherwise undecidable (the stand-in wrote soon after without saying to whom, or
      the dialogue ends within the window)."""
    writer = utterances[index]["interlocutor_id"]
    window = utterances[index + 1 : index + 1 + WINDOW]
    addressed = any(stand_in in _mentions(u) for u in turn_of(utterances, index))
    if addressed and window and window[0]["interlocutor_id"] == stand_in:
        if _mentions(window[0]) <= {writer}:
            return Label(True, LabelRule.ADDRESSED_NEXT, answer=index + 1)
    for offset, later in enumerate(window, start=index + 1):
        if later["interlocutor_id"] == writer:
            break
        if later["interlocutor_id"] == stand_in and writer in _mentions(later):
            return Label(True, LabelRule.MENTION_ANSWER, answer=offset)
    if len(window) < WINDOW or any(u["interlocutor_id"] == stand_in for u in window):
        return None
    after = (u for u in utterances[index + 1 + WINDOW :] if u["interlocutor_id"] == stand_in)
    first = next(after, None)
    if first is not None and writer in _mentions(first):
        return None
    return Label(False, LabelRule.NO_REPLY)


def excerpt_from(
    path: Path, *, rng: random.Random, silent_per_speak: int, most: int
) -> list[Point]:
    dialogue = json.loads(path.read_text(encoding="utf-8"))
    stand_in = rng.choice(sorted(dialogue["interlocutors"]))
    utterances = dialogue["utterances"]
    excerpt = Excerpt(
        id=f"mrmp-{dialogue['dialogue_id']}",
        language="ja",
        source=f"{SOURCE}: dialogues/{path.parent.name}/{path.name}",
        channel=CHANNEL,
        stand_in=stand_in,
        messages=tuple(
            Line(u["interlocutor_id"], u["text"], START + i * MESSAGE_SECONDS)
            for i, u in enumerate(utterances)
        ),
    )
    start = rng.randrange(SHOWN_MESSAGES - 1, max(SHOWN_MESSAGES, len(utterances) - SPAN))
    points = []
    for i, utterance in enumerate(utterances[:-1]):
        writer = utterance["interlocutor_id"]
        if not start <= i < start + SPAN or writer == stand_in:
            continue
        if utterances[i + 1]["interlocutor_id"] == writer:
            continue  # the turn goes on: no judgment is made here
        label = label_of(utterances, i, stand_in)
        if label is None:
            continue
        addressees = sorted(set().union(*(_mentions(u) for u in turn_of(utterances, i))))
        points.append(
            Point(
                excerpt,
                i,
                kind_at(excerpt.messages, i, stand_in),
                label.speak,
                LabelSource.RULE,
                addressees=tuple(addressees),
                rule=label.rule,
                answer=label.answer,
            )
        )
    return kept(points, rng=rng, silent_per_speak=silent_per_speak, most=most)
