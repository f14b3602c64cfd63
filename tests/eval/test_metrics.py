"""The evaluation's arithmetic on a confusion matrix counted by hand."""

from __future__ import annotations

import pytest

from app.eval.metrics import Decision, intervals, rates, scored


def _decisions() -> list[Decision]:
    # 3 true positives, 1 false positive, 2 false negatives, 4 true negatives; three points
    # addressed to the stand-in, one of them met with silence.
    return [
        Decision(speak=True, spoke=True, addressed=True),
        Decision(speak=True, spoke=True, addressed=True),
        Decision(speak=True, spoke=True, addressed=False),
        Decision(speak=False, spoke=True, addressed=False),
        Decision(speak=True, spoke=False, addressed=True),
        Decision(speak=True, spoke=False, addressed=False),
        *(Decision(speak=False, spoke=False, addressed=False) for _ in range(4)),
    ]


def test_rates_match_the_hand_counted_matrix() -> None:
    found = rates(_decisions())
    assert found["precision"] == pytest.approx(3 / 4)
    assert found["recall"] == pytest.approx(3 / 5)
    assert found["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert found["balanced_accuracy"] == pytest.approx((3 / 5 + 4 / 5) / 2)
    assert found["unwanted_per_100_silent"] == pytest.approx(100 * 1 / 5)
    assert found["missed_direct_address_rate"] == pytest.approx(1 / 3)


def test_undefined_rates_are_zero_and_counts_add_up() -> None:
    silent = [Decision(speak=s, spoke=False, addressed=False) for s in (True, False, False)]
    found = scored(silent)
    assert found["precision"] == 0.0 and found["recall"] == 0.0 and found["f1"] == 0.0
    assert found["balanced_accuracy"] == pytest.approx(0.5)
    assert found["missed_direct_address_rate"] == 0.0  # nobody addressed the stand-in
    assert (found["points"], found["speak_points"], found["silent_points"]) == (3, 1, 2)


def test_intervals_hold_the_value_and_are_seeded() -> None:
    decisions = _decisions()
    first, again = intervals(decisions), intervals(decisions)
    assert first == again
    found = rates(decisions)
    for name, (low, high) in first.items():
        assert low <= found[name] <= high, name
    assert first["recall"][0] < first["recall"][1]  # ten points leave real doubt
