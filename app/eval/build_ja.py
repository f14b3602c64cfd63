"""Japanese decision points from the Multi-Relational Multi-Party Chat Corpus (Tsuda et al.,
2025; github.com/nu-dialogue/multi-relational-multi-party-chat-corpus, CC BY-SA 4.0): text
chats of three people, each message's `mention_to` naming whom it was addressed to (the
participants' own @-mentions).

Each chosen dialogue is one excerpt; one of its three people, drawn at random, stands in for
tomo. A point is another person's message; it is `speak` when the stand-in wrote the very next
message, else `silent`. Its addressees are the message's `mention_to`. The corpus has no times:
messages are given one every MESSAGE_SECONDS.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

from app.eval.labels import kept, kind_at
from app.eval.points import SHOWN_MESSAGES, Excerpt, Line, Point

SOURCE = "Multi-Relational Multi-Party Chat Corpus (Tsuda et al., 2025), CC BY-SA 4.0"
MESSAGE_SECONDS = 20.0
START = datetime(2025, 1, 15, 12, 0, tzinfo=UTC).timestamp()
CHANNEL = "雑談"
SPAN = 30  # an excerpt's points are among this many consecutive messages


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
    points = [
        Point(
            excerpt,
            i,
            kind_at(excerpt.messages, i, stand_in),
            utterances[i + 1]["interlocutor_id"] == stand_in,
            tuple(u["mention_to"] or ()),
        )
        for i, u in enumerate(utterances[:-1])
        if start <= i < start + SPAN and u["interlocutor_id"] != stand_in
    ]
    return kept(points, rng=rng, silent_per_speak=silent_per_speak, most=most)
