"""The evaluation's arithmetic on a confusion matrix counted by hand, and its intervals on
clustered data (points cut from one conversation)."""

from __future__ import annotations

import pytest

from app.eval.metrics import Decision, intervals, rates, scored


def _decisions() -> list[Decision]:
    # 3 true positives, 1 false positive, 2 false negatives, 4 true negatives; three points
    # addressed to the stand-in, one of them met with silence. Each its own conversation.
    truth = [
        (True, True, True),
        (True, True, True),
        (True, True, False),
        (False, True, False),
        (True, False, True),
        (True, False, False),
        *((False, False, False) for _ in range(4)),
    ]
    return [Decision(s, d, a, f"c{n}") for n, (s, d, a) in enumerate(truth)]


def test_rates_match_the_hand_counted_matrix() -> None:
    found = rates(_decisions())
    assert found["precision"] == pytest.approx(3 / 4)
    assert found["recall"] == pytest.approx(3 / 5)
    assert found["f1"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert found["balanced_accuracy"] == pytest.approx((3 / 5 + 4 / 5) / 2)
    assert found["unwanted_per_100_silent"] == pytest.approx(100 * 1 / 5)
    assert found["missed_direct_address_rate"] == pytest.approx(1 / 3)


def test_undefined_rates_are_zero_and_counts_add_up() -> None:
    silent = [Decision(s, False, False, f"c{n}") for n, s in enumerate((True, False, False))]
    found = scored(silent)
    assert found["precision"] == 0.0 and found["recall"] == 0.0 and found["f1"] == 0.0
    assert found["balanced_accuracy"] == pytest.approx(0.5)
    assert found["missed_direct_address_rate"] == 0.0  # nobody addressed the stand-in
    assert (found["points"], found["speak_points"], found["silent_points"]) == (3, 1, 2)
    # Nothing was spoken and nobody addressed: those two are undefined, and say so.
    assert found["undefined"] == ["precision", "missed_direct_address_rate"]
    assert found["intervals"]["precision"] is None


def test_intervals_hold_the_value_and_are_seeded() -> None:
    decisions = _decisions()
    first, again = intervals(decisions), intervals(decisions)
    assert first == again
    found = rates(decisions)
    for name, (low, high) in first.items():
        assert low <= found[name] <= high, name
    assert first["recall"][0] < first["recall"][1]  # ten points leave real doubt


def _clustered(size: int) -> list[Decision]:
    """Twelve conversations of `size` points each, every point of a conversation alike: the
    model got all of a conversation right or all of it wrong."""
    decisions = []
    for n in range(12):
        speak, spoke = n % 2 == 0, n % 3 != 0  # TP, FN, FP, TN and mixtures across clusters
        decisions += [Decision(speak, spoke, n == 4, f"c{n}") for _ in range(size)]
    return decisions


def test_intervals_resample_whole_conversations() -> None:
    one, ten = _clustered(1), _clustered(10)
    assert rates(one) == pytest.approx(rates(ten))
    # Ten alike points of a conversation tell no more than one: resampling conversations
    # gives the same intervals either way.
    assert intervals(ten) == intervals(one)
    # Taken as 120 independent points they would look ten times surer.
    apart = [Decision(d.speak, d.spoke, d.addressed, f"p{n}") for n, d in enumerate(ten)]
    clustered_width = intervals(ten)["recall"][1] - intervals(ten)["recall"][0]
    apart_width = intervals(apart)["recall"][1] - intervals(apart)["recall"][0]
    assert apart_width < clustered_width / 2


def test_resamples_where_a_rate_is_undefined_are_left_out() -> None:
    # One addressed point (met with silence) among 20 conversations: most resamples hold no
    # addressed point at all. Counted as 0 there, the interval would reach down to 0.
    decisions = [Decision(False, False, n == 0, f"c{n}") for n in range(20)]
    found = scored(decisions)
    assert found["missed_direct_address_rate"] == 1.0
    assert found["intervals"]["missed_direct_address_rate"] == [1.0, 1.0]
    assert found["intervals"]["unwanted_per_100_silent"] == [0.0, 0.0]
    assert found["intervals"]["recall"] is None  # nothing to speak to, in any resample
