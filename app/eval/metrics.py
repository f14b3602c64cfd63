"""Scores for speaking: the confusion of what was done with what the stand-in did, the rates
an operator weighs, and bootstrap 95 % intervals.

An undefined rate (a precision with nothing spoken, a recall with nothing to speak to) is
reported as 0.0, as is usual, and named under `undefined`. Intervals come from resampling
whole conversations with replacement (the points cut from one excerpt share their messages and
their stand-in, so they are not independent), seeded; a resample where a rate is undefined
gives that rate no value, and a rate no resample defines has no interval (None).
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
    conversation: str  # the excerpt the point was cut from: what the bootstrap resamples


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def defined_rates(decisions: Sequence[Decision]) -> dict[str, float | None]:
    """Each rate, None where it is undefined on these decisions."""
    tp = sum(d.speak and d.spoke for d in decisions)
    fp = sum(not d.speak and d.spoke for d in decisions)
    fn = sum(d.speak and not d.spoke for d in decisions)
    tn = sum(not d.speak and not d.spoke for d in decisions)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    specificity = _ratio(tn, tn + fp)
    unwanted = _ratio(fp, fp + tn)
    addressed = [d for d in decisions if d.addressed]
    return {
        "precision": precision,
        "recall": recall,
        "f1": _ratio(2 * tp, 2 * tp + fp + fn),
        "balanced_accuracy": None
        if recall is None or specificity is None
        else (recall + specificity) / 2,
        "unwanted_per_100_silent": None if unwanted is None else 100 * unwanted,
        "missed_direct_address_rate": _ratio(sum(not d.spoke for d in addressed), len(addressed)),
    }


def rates(decisions: Sequence[Decision]) -> dict[str, float]:
    """Each rate, 0.0 where it is undefined (as the report's fixed fields have it)."""
    return {name: value or 0.0 for name, value in defined_rates(decisions).items()}


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
) -> dict[str, list[float] | None]:
    """Each rate's 95 % interval: the 2.5th and 97.5th percentiles over resamples of whole
    conversations in which it is defined; None when no resample defines it."""
    clusters: dict[str, list[Decision]] = {}
    for decision in decisions:
        clusters.setdefault(decision.conversation, []).append(decision)
    groups = list(clusters.values())
    rng = random.Random(seed)
    drawn: dict[str, list[float]] = {name: [] for name in RATES}
    for _ in range(samples if groups else 0):
        sample = [d for group in rng.choices(groups, k=len(groups)) for d in group]
        for name, value in defined_rates(sample).items():
            if value is not None:
                drawn[name].append(value)
    return {name: _percentiles(values) for name, values in drawn.items()}


def _percentiles(values: list[float]) -> list[float] | None:
    if not values:
        return None
    ordered = sorted(values)
    low, high = int(0.025 * len(ordered)), min(len(ordered) - 1, int(0.975 * len(ordered)))
    return [ordered[low], ordered[high]]


def scored(decisions: Sequence[Decision]) -> dict[str, object]:
    """Counts, rates (0.0 where undefined, those named under `undefined`) and intervals, as
    the report's JSON has them."""
    undefined = [name for name, value in defined_rates(decisions).items() if value is None]
    return {
        **counts(decisions),
        **rates(decisions),
        "undefined": undefined,
        "intervals": intervals(decisions),
    }
