"""What is kept of files lately read (app.files.cache): bounded in time and in bytes, the least
recently used out first; refusals held off for a while."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.files.cache import KeptImages, Refusals


def test_an_image_is_kept_for_its_time_then_forgotten() -> None:
    kept = KeptImages(seconds=60, max_bytes=1000)
    kept.put("F1", "data:a", now=100.0)
    assert kept.get("F1", now=159.9) == "data:a"
    assert kept.get("F1", now=160.0) is None
    assert (len(kept), kept.size) == (0, 0)


def test_the_least_recently_used_goes_first_when_the_bytes_run_out() -> None:
    kept = KeptImages(seconds=60, max_bytes=30)
    kept.put("F1", "1" * 10, now=0)
    kept.put("F2", "2" * 10, now=0)
    kept.put("F3", "3" * 10, now=0)
    assert kept.get("F1", now=1) == "1" * 10  # F2 is now the least recently used
    kept.put("F4", "4" * 10, now=2)
    assert kept.get("F2", now=3) is None
    assert [kept.get(i, now=3) for i in ("F1", "F3", "F4")] == ["1" * 10, "3" * 10, "4" * 10]
    assert kept.size == 30


def test_one_image_larger_than_the_bound_is_not_kept_and_drops_nothing() -> None:
    kept = KeptImages(seconds=60, max_bytes=20)
    kept.put("F1", "1" * 10, now=0)
    kept.put("F2", "2" * 21, now=0)
    assert kept.get("F2", now=1) is None
    assert kept.get("F1", now=1) == "1" * 10


def test_putting_an_image_again_replaces_it_and_its_time() -> None:
    kept = KeptImages(seconds=10, max_bytes=100)
    kept.put("F1", "old", now=0)
    kept.put("F1", "newer", now=8)
    assert kept.get("F1", now=15) == "newer"
    assert (len(kept), kept.size) == (1, 5)


def test_images_that_ran_out_make_room_before_any_in_time() -> None:
    kept = KeptImages(seconds=10, max_bytes=20)
    kept.put("F1", "1" * 10, now=0)
    kept.put("F2", "2" * 10, now=5)
    kept.put("F3", "3" * 10, now=11)  # F1 ran out at 10: it goes, F2 stays
    assert kept.get("F2", now=12) == "2" * 10
    assert kept.get("F3", now=12) == "3" * 10


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("ABCDEFGH"), st.integers(0, 40), st.floats(0, 1000)),
        max_size=60,
    )
)
def test_whatever_is_put_the_bytes_kept_stay_within_the_bound(
    puts: list[tuple[str, int, float]],
) -> None:
    kept = KeptImages(seconds=30, max_bytes=64)
    for file_id, length, now in sorted(puts, key=lambda put: put[2]):
        kept.put(file_id, "x" * length, now=now)
        assert 0 <= kept.size <= 64
        assert kept.size == sum(
            len(uri) for uri in (kept.get(i, now=now) for i in "ABCDEFGH") if uri is not None
        )


def test_a_refused_file_is_held_off_for_a_while_and_told_once() -> None:
    refusals = Refusals(seconds=60)
    assert refusals.may_try("F1", now=0)
    assert refusals.refuse("F1", now=0)
    assert not refusals.may_try("F1", now=59)
    assert not refusals.refuse("F1", now=30)  # already held off: not news
    assert refusals.may_try("F1", now=60)
    assert refusals.refuse("F1", now=60)
