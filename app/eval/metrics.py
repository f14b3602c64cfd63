"""Scores for speaking: the confusion of what was done with what the stand-in did, the rates
an operator weighs, and bootstrap 95 % intervals.

An undefined rate (a precision with nothing spoken, a recall with nothing to speak to) is 0.0,
as is usual; intervals come from resampling the points with replacement, seeded.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 39
RATES = (
    "precision",
    "recall",
    "f1",
    "balanced_accuracy",
    "unwanted_per_100_silent",
    "missed_direct_address_rate",
)


@dataclass(frozen=True)
class Decision:
    """One point's truth and what was decided on it."""

    speak: bool  # the label: the stand-in spoke
    spoke: bool  # the decision (an unusable answer is silence, as in tomo)
    addressed: bool  # the newest message was addressed to the stand-in


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def rates(decisions: Sequence[Decision]) -> dict[str, float]:
    tp = sum(d.speak and d.spoke for d in decisions)
    fp = sum(not d.speak and d.spoke for d in decisions)
    fn = sum(d.speak and not d.spoke for d in decisions)
    tn = sum(not d.speak and not d.spoke for d in decisions)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    addressed = [d for d in decisions if d.addressed]
    return {
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * precision * recall, precision + recall),
        "balanced_accuracy": (recall + _ratio(tn, tn + fp)) / 2,
        "unwanted_per_100_silent": 100 * _ratio(fp, fp + tn),
        "missed_direct_address_rate": _ratio(sum(not d.spoke for d in addressed), len(addressed)),
    }


def counts(decisions: Sequence[Decision]) -> dict[str, int]:
    speak = sum(d.speak for d in decisions)
    return {
        "points": len(decisions),
        "speak_points": speak,
        "silent_points": len(decisions) - speak,
        "addressed_points": sum(d.addressed for d in decisions),
        "spoke": sum(d.spoke for d in decisions),
    }


def intervals(
    decisions: Sequence[Decision], *, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> dict[str, list[float]]:
    """Each rate's 95 % interval: the 2.5th and 97.5th percentiles over resamples."""
    if not decisions:
        return {name: [0.0, 0.0] for name in RATES}
    rng = random.Random(seed)
    drawn: dict[str, list[float]] = {name: [] for name in RATES}
    for _ in range(samples):
        sample = rng.choices(decisions, k=len(decisions))
        for name, value in rates(sample).items():
            drawn[name].append(value)
    low, high = int(0.025 * samples), min(samples - 1, int(0.975 * samples))
    return {name: [sorted(v)[low], sorted(v)[high]] for name, v in drawn.items()}


def scored(decisions: Sequence[Decision]) -> dict[str, object]:
    """Counts, rates and their intervals, as the report's JSON has them."""
    return {**counts(decisions), **rates(decisions), "intervals": intervals(decisions)}
