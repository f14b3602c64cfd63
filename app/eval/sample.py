"""A seeded sample of points spread over languages and kinds (`--limit N`, and the data
README's sample): each (language, kind) stratum gets a share of N in proportion to its size
(largest remainders first, every stratum at least one where N allows), its points drawn at
random with a fixed seed; the same points on every run, in the data's order."""

from __future__ import annotations

import random
from collections.abc import Sequence

from app.eval.points import Point

SAMPLE_SEED = 39


def _shares(sizes: Sequence[int], n: int) -> list[int]:
    """How many of each stratum: at least one each where n allows, the rest in proportion
    to what each has left (Hamilton's largest-remainder method, ties to the earlier)."""
    base = [1 if n >= len(sizes) and size else 0 for size in sizes]
    left = [size - taken for size, taken in zip(sizes, base, strict=True)]
    rest, room = n - sum(base), sum(left)
    if room == 0 or rest <= 0:
        return base
    exact = [rest * size / room for size in left]
    shares = [int(x) for x in exact]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - shares[i]), i))
    for i in by_remainder[: rest - sum(shares)]:
        shares[i] += 1
    return [taken + share for taken, share in zip(base, shares, strict=True)]


def stratified(points: Sequence[Point], n: int, *, seed: int = SAMPLE_SEED) -> list[Point]:
    """n points (all of them when n is not smaller), spread over (language, kind)."""
    if n >= len(points):
        return list(points)
    strata: dict[tuple[str, str], list[int]] = {}
    for position, point in enumerate(points):
        strata.setdefault((point.excerpt.language, point.kind), []).append(position)
    keys = sorted(strata)
    rng = random.Random(seed)
    chosen: list[int] = []
    for key, share in zip(keys, _shares([len(strata[k]) for k in keys], n), strict=True):
        chosen += rng.sample(strata[key], share)
    return [points[position] for position in sorted(chosen)]
