"""`--limit N`'s sample: spread over languages and kinds in proportion, every stratum present
where N allows, the same points on every run, in the data's order."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from app.eval.points import Excerpt, LabelSource, Line, Point
from app.eval.sample import stratified


def _points(sizes: dict[tuple[str, str], int]) -> list[Point]:
    points = []
    for (language, kind), size in sizes.items():
        excerpt = Excerpt(
            id=f"{language}-{kind}",
            language=language,
            source="written for this test",
            channel="c",
            stand_in="me",
            messages=tuple(Line("you", str(n), float(n)) for n in range(size)),
        )
        points += [Point(excerpt, n, kind, n % 2 == 0, LabelSource.RULE) for n in range(size)]
    return points


SIZES = {("en", "join"): 60, ("en", "follow_up"): 30, ("ja", "join"): 6, ("ja", "follow_up"): 4}


def _strata(points: list[Point]) -> Counter[tuple[str, str]]:
    return Counter((p.excerpt.language, p.kind) for p in points)


def test_the_sample_is_spread_in_proportion_and_seeded() -> None:
    points = _points(SIZES)
    sample = stratified(points, 20)
    # One each, then 16 in proportion to what is left (59, 29, 5, 3 of 96: 9.8, 4.8, 0.8,
    # 0.5), the largest remainders first.
    assert _strata(sample) == {
        ("en", "join"): 11,
        ("en", "follow_up"): 6,
        ("ja", "join"): 2,
        ("ja", "follow_up"): 1,
    }
    assert stratified(points, 20) == sample  # the same on every run
    positions = [points.index(p) for p in sample]
    assert positions == sorted(positions)  # in the data's order
    assert sample != points[:20]  # not the first N
    assert stratified(points, 100) == points and stratified(points, 500) == points


def test_a_sample_smaller_than_the_strata_takes_the_largest() -> None:
    assert _strata(stratified(_points(SIZES), 2)) == {("en", "join"): 1, ("en", "follow_up"): 1}


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=4),
    n=st.integers(min_value=1, max_value=200),
)
def test_any_sample_has_n_distinct_points_and_every_stratum_it_can(
    sizes: list[int], n: int
) -> None:
    keys = [("en", "join"), ("en", "follow_up"), ("ja", "join"), ("ja", "follow_up")]
    points = _points(dict(zip(keys, sizes, strict=False)))
    sample = stratified(points, n)
    assert len(sample) == min(n, len(points))
    assert len({id(p) for p in sample}) == len(sample)
    if n >= len(sizes):
        assert set(_strata(sample)) == set(_strata(points))
