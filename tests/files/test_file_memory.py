"""Reading any file, however it was made, raises the reading process's peak resident memory by
at most ~120 MB (docs/how-tomo-works.md#files): the hostile pictures of bench.images (8000x8000
PNGs: RGBA, 16-bit, palette, interlaced; a GIF of 400 frames on an 8000x8000 canvas; a 48 MP
progressive JPEG; an 8000x8000 WebP), the largest picture of each kind that is still read,
several in one message, and a PDF bomb. Each is made here and read by tomo's own code
(app.files.images, app.files.documents) in a fresh child process, which reports how much its
peak grew. Memory, not time: the figures do not depend on the machine's speed."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.files.images import TEXT_BYTES
from bench.images import MAKERS, TOGETHER, at_the_limit, hostile, pdf_bomb, peak_growth, png_text

# The budget (80 MiB) and what a busy machine's thread timing adds: 69-79 MiB measured on a quiet
# one (bench.images), 91.8 once for four at once under CI's load.
BOUND_MIB = 120


def _outcomes(found: dict[str, object]) -> list[str]:
    outcomes = found["outcomes"]
    assert isinstance(outcomes, list)
    return [str(outcome) for outcome in outcomes]


def _mib(found: dict[str, object]) -> float:
    return float(str(found["mib"]))


@pytest.fixture(scope="module")
def largest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The largest square picture of each kind still read, as files."""
    folder = tmp_path_factory.mktemp("largest")
    made = {}
    for kind in MAKERS:
        made[kind] = folder / kind
        made[kind].write_bytes(at_the_limit(kind))
    return made


@pytest.mark.parametrize("kind", list(MAKERS))
def test_a_hostile_picture_is_refused_before_it_is_decoded(kind: str, tmp_path: Path) -> None:
    """Today (before): the RGBA PNG took 583 MB, the WebP 1,072 MB, and all were decoded."""
    path = tmp_path / kind
    path.write_bytes(hostile(kind))
    found = peak_growth([path])
    (outcome,) = _outcomes(found)
    assert outcome.startswith("refused: ") and "px is too large to read" in outcome
    assert _mib(found) <= BOUND_MIB


@pytest.mark.parametrize("kind", list(MAKERS))
def test_the_largest_picture_of_each_kind_still_read_stays_within_the_bound(
    kind: str, largest: dict[str, Path]
) -> None:
    found = peak_growth([largest[kind]])
    (outcome,) = _outcomes(found)
    assert outcome.startswith("read ")
    assert _mib(found) <= BOUND_MIB


def test_several_pictures_in_one_message_cost_what_one_does(
    largest: dict[str, Path], tmp_path: Path
) -> None:
    """Four of the largest still read and four hostile ones, asked for at once from eight
    threads (a judgment and a reply each reading a message's four): read one at a time."""
    hostile_paths = []
    for kind in TOGETHER:
        hostile_paths.append(tmp_path / kind)
        hostile_paths[-1].write_bytes(hostile(kind))
    found = peak_growth([*(largest[kind] for kind in TOGETHER), *hostile_paths])
    outcomes = _outcomes(found)
    assert [o.split(" ")[0] for o in outcomes] == ["read"] * 4 + ["refused:"] * 4
    assert _mib(found) <= BOUND_MIB


def test_a_png_of_text_chunks_is_refused_without_holding_them(tmp_path: Path) -> None:
    """63 MB of zTXt in 64 KB: before, Pillow inflated and kept all of it (61 MB) before the
    picture was looked at; now no more than TEXT_BYTES."""
    path = tmp_path / "text.png"
    path.write_bytes(png_text())
    found = peak_growth([path])
    assert _outcomes(found) == ["refused: not an image Pillow can read (ValueError)"]
    assert _mib(found) <= 2 * TEXT_BYTES / 1024 / 1024


def test_a_pdf_bomb_is_read_within_the_bound(tmp_path: Path) -> None:
    """Five pages of 70 MB of drawing instructions each, in 350 KB: before, pypdf inflated and
    kept them all (208 MB); now none past 1 MB, and the page of text after them is read."""
    path = tmp_path / "bomb.pdf"
    path.write_bytes(pdf_bomb())
    assert path.stat().st_size < 400_000
    found = peak_growth([path])
    assert _outcomes(found) == ["read 14 characters"]  # "Budget: 80,000"
    assert _mib(found) <= BOUND_MIB
