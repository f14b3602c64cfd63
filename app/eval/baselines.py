"""What a judgment must beat: staying silent always, speaking only when named, and speaking at
random as often as the stand-in did (seeded); each scored overall, by kind and by language."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from app.eval.metrics import Decision, scored
from app.eval.points import Point, breakdown
from app.eval.slack_view import names_stand_in

RANDOM_SEED = 39


def _scored(points: Sequence[Point], spoke: Sequence[bool]) -> dict[str, Any]:
    decisions = [
        Decision(p.speak, s, p.addressed_to_stand_in, p.excerpt.id)
        for p, s in zip(points, spoke, strict=True)
    ]
    return {
        **scored(decisions),
        **{
            part: {name: scored([decisions[i] for i in where]) for name, where in groups.items()}
            for part, groups in breakdown(points).items()
        },
    }


def baselines(points: Sequence[Point], *, seed: int = RANDOM_SEED) -> dict[str, dict[str, Any]]:
    rng = random.Random(seed)
    base_rate = sum(p.speak for p in points) / len(points) if points else 0.0
    return {
        "always_silent": _scored(points, [False for _ in points]),
        "mentions_only": _scored(points, [names_stand_in(p) for p in points]),
        "random_at_base_rate": _scored(points, [rng.random() < base_rate for _ in points]),
    }
