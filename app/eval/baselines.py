"""What a judgment must beat: staying silent always, speaking only when named, and speaking at
random as often as the stand-in did (seeded)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from app.eval.metrics import Decision, scored
from app.eval.points import Point
from app.eval.slack_view import names_stand_in

RANDOM_SEED = 39


def _decisions(points: Sequence[Point], spoke: Callable[[Point], bool]) -> list[Decision]:
    return [Decision(p.speak, spoke(p), p.addressed_to_stand_in) for p in points]


def baselines(points: Sequence[Point], *, seed: int = RANDOM_SEED) -> dict[str, dict[str, object]]:
    rng = random.Random(seed)
    base_rate = sum(p.speak for p in points) / len(points) if points else 0.0
    return {
        "always_silent": scored(_decisions(points, lambda _: False)),
        "mentions_only": scored(_decisions(points, names_stand_in)),
        "random_at_base_rate": scored(_decisions(points, lambda _: rng.random() < base_rate)),
    }
