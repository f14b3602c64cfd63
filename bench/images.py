"""Memory: how much reading one hostile image (or several in one message, or a PDF bomb)
raises a process's peak resident memory.

    .venv/bin/python -m bench.images

Each file is made here: with Pillow where Pillow writes it (an 8000x8000 RGBA PNG of 258 KB,
a palette one, a 48 MP progressive JPEG, an 8000x8000 WebP), byte by byte where it does not
(a 16-bit RGBA PNG, an interlaced PNG, an animated GIF of 400 frames on an 8000x8000 canvas);
then, of each kind, the largest square picture still read (its cost just within the budget):
the worst that is decoded. Then a PNG of 63 MB of text chunks, and a PDF whose pages inflate
to 70 MB each.
Each case runs in a fresh child process that imports tomo's file reading, notes its peak RSS,
reads the file(s) with `app.files.images.data_uri` (several at once from threads, as the job
worker does for one message) or `app.files.documents.document_text`, and prints how much the
peak grew. The peak is VmHWM in /proc/self/status: `ru_maxrss` would carry the parent's own
peak over exec. Memory does not depend on the machine's speed; the seconds printed do.
Last line: `images worst_mib=N`.
"""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

from PIL import Image

from app.files.decoding import BUDGET_BYTES
from app.files.images import drafted_cost
from bench.common import ROOT, machine

SIDE = 8000


def _chunk(kind: bytes, body: bytes) -> bytes:
    """A PNG chunk: length, kind, body, CRC."""
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _png(width: int, height: int, *, depth: int, color: int, interlaced: bool = False) -> bytes:
    """A PNG Pillow does not write: every pixel zero, `depth` bits a sample, colour type
    `color` (2 RGB, 6 RGBA), Adam7-interlaced or not."""
    samples = {2: 3, 6: 4}[color]

    # Adam7's seven passes: (first column, first row, column step, row step); one pass if not.
    passes = (
        [
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ]
        if interlaced
        else [(0, 0, 1, 1)]
    )
    squeeze = zlib.compressobj(9)
    data = bytearray()
    for x0, y0, dx, dy in passes:
        columns, rows = -(-(width - x0) // dx), -(-(height - y0) // dy)
        if columns > 0 and rows > 0:
            row = bytes(1 + columns * samples * depth // 8)  # filter 0, then the samples
            for _ in range(rows):
                data += squeeze.compress(row)
    data += squeeze.flush()
    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, int(interlaced))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", bytes(data))
        + _chunk(b"IEND", b"")
    )


def _gif(width: int, height: int, *, frames: int) -> bytes:
    """An animated GIF: a `width` x `height` canvas, `frames` frames of one pixel each."""
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF0, 0, 0))
    out += b"\x00\x00\x00\xff\xff\xff"  # a global palette of two colours
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop for ever
    for n in range(frames):
        out += b"\x21\xf9\x04\x00\x02\x00\x00\x00"  # 20 ms a frame
        x, y = n % width, n // width % height
        out += b"\x2c" + struct.pack("<HHHHB", x, y, 1, 1, 0)
        out += b"\x02\x02\x44\x01\x00"  # LZW, code size 2: clear, colour 0, end
    return bytes(out + b"\x3b")


def _saved(picture: Image.Image, kind: str, **options: object) -> bytes:
    out = io.BytesIO()
    picture.save(out, format=kind, **options)
    return out.getvalue()


def _photo(width: int, height: int) -> Image.Image:
    """Photo-like (a gradient under coarse noise), so a JPEG of it is not all one colour."""
    noise = Image.effect_noise((width // 8, height // 8), 64).convert("L").resize((width, height))
    gradient = Image.linear_gradient("L").resize((width, height))
    return Image.merge("RGB", (gradient, noise, gradient.transpose(Image.Transpose.ROTATE_180)))


# name: how it is made at a size. At SIZE each is small on the wire and huge once decoded.
MAKERS: dict[str, Callable[[int, int], bytes]] = {
    "png_rgba": lambda w, h: _saved(Image.new("RGBA", (w, h), (9, 99, 199, 200)), "PNG"),
    "png_rgba16": lambda w, h: _png(w, h, depth=16, color=6),
    "png_palette": lambda w, h: _saved(Image.new("P", (w, h), 3), "PNG", transparency=0),
    "png_interlaced": lambda w, h: _png(w, h, depth=8, color=2, interlaced=True),
    "gif_400_frames": lambda w, h: _gif(w, h, frames=400),
    "jpeg_progressive": lambda w, h: _saved(
        _photo(w, h), "JPEG", progressive=True, subsampling=0, quality=90
    ),
    "webp": lambda w, h: _saved(
        Image.new("RGBA", (w, h), (9, 99, 199, 200)), "WEBP", lossless=True
    ),
}
SIZE = {name: (8000, 6000) if name.startswith("jpeg") else (SIDE, SIDE) for name in MAKERS}


def _cost(data: bytes) -> int:
    with Image.open(io.BytesIO(data)) as opened:
        return drafted_cost(opened, data)


def at_the_limit(name: str) -> bytes:
    """The largest square picture of this kind that is still read (its decoding cost, as
    app.files.decoding tells it, within 2% of the budget): the worst case of what is decoded."""
    low, high = 64, max(SIZE[name])
    best = MAKERS[name](low, low)
    while high - low > low // 50:
        side = (low + high) // 2
        made = MAKERS[name](side, side)
        if _cost(made) <= BUDGET_BYTES:
            low, best = side, made
        else:
            high = side
    return best


def png_text() -> bytes:
    """A 100x100 PNG carrying 63 zTXt chunks of 1 MB of text each, in 64 KB."""
    plain = _saved(Image.new("RGB", (100, 100)), "PNG")
    text = b"".join(
        _chunk(b"zTXt", b"note%d\x00\x00" % n + zlib.compress(b"a" * 1_000_000)) for n in range(63)
    )
    return plain[:33] + text + plain[33:]  # after the signature and IHDR


def pdf_bomb() -> bytes:
    """Five pages whose drawing instructions are 70 MB of spaces each (70 KB compressed), then
    a page of text."""
    from tests.files.samples import pdf  # the tests' PDF writer

    return pdf(*[b" " * 70_000_000] * 5, ["Budget: 80,000"])


def hostile(name: str) -> bytes:
    return MAKERS[name](*SIZE[name])


# Several in one message: as many as a prompt shows (MAX_IMAGES_PER_PROMPT's default, 4).
TOGETHER = ("png_rgba", "png_rgba16", "jpeg_progressive", "webp")

# Runs in the child: the peak before and after reading the files named on the command line.
CHILD = """
import concurrent.futures, json, sys, time
from pathlib import Path
from PIL import Image
from app.domain import SharedFile
from app.files.documents import document_text
from app.files.fetch import Unreadable
from app.files.images import data_uri
Image.init()
PDF = SharedFile(id="F1", name="bomb.pdf", mimetype="application/pdf", filetype="pdf")
at_once, files = int(sys.argv[1]), [Path(p).read_bytes() for p in sys.argv[2:]]
def read(data):
    try:
        if data.startswith(b"%PDF"):
            return "read %d characters" % len(document_text(PDF, data))
        return "read %d KB" % (len(data_uri(data)) // 1024)
    except Unreadable as error:
        return "refused: %s" % error
def peak():  # KiB; ru_maxrss would carry the parent's peak over exec
    status = Path("/proc/self/status").read_text().split("VmHWM:")[1]
    return int(status.split()[0])
before = peak()
started = time.perf_counter()
with concurrent.futures.ThreadPoolExecutor(at_once) as pool:
    outcomes = list(pool.map(read, files))
after = peak()
print(json.dumps({"mib": (after - before) / 1024, "seconds": time.perf_counter() - started,
                  "outcomes": outcomes}))
"""


def peak_growth(paths: Sequence[Path], *, at_once: int = 0) -> dict[str, object]:
    """Reading these files in a fresh process, `at_once` at a time (all of them unless said):
    {mib, seconds, outcomes}."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(at_once or len(paths)), *map(str, paths)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _estimate(path: Path) -> float | None:
    """The cost app.files.decoding estimates for reading this file (MiB); None for a file that
    is not a picture or whose header Pillow refuses."""
    try:
        return _cost(path.read_bytes()) / 1024 / 1024
    except Exception:  # a PDF, a PNG of too much text
        return None


def _report(name: str, paths: Sequence[Path]) -> float:
    """Reads the files in a fresh process and prints how much its peak grew, and beside each
    picture the cost estimated for it; a peak past the largest estimate of the pictures read
    is flagged (the estimate is meant as an upper bound of it)."""
    found = peak_growth(paths)
    mib = float(str(found["mib"]))
    outcomes = [str(outcome) for outcome in found["outcomes"]]  # type: ignore[attr-defined]
    estimates = [_estimate(path) for path in paths]
    print(f"{name}: peak RSS +{mib:.0f} MiB in {float(str(found['seconds'])):.1f} s")
    for outcome, estimate in zip(outcomes, estimates, strict=True):
        told = "" if estimate is None else f" (estimated {estimate:.0f} MiB)"
        print(f"    {outcome}{told}")
    read = [e for o, e in zip(outcomes, estimates, strict=True) if o.startswith("read ") and e]
    if read and mib > max(read):
        print(f"    OVER THE ESTIMATE: +{mib:.0f} MiB > {max(read):.0f} MiB")
    return mib


def main() -> None:
    print(machine())
    print(f"decoding budget: {BUDGET_BYTES // 1024 // 1024} MiB")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="tomo-bench-images-") as folder:
        for variant, make in (("hostile", hostile), ("at the limit", at_the_limit)):
            paths: dict[str, Path] = {}
            for name in MAKERS:
                started = time.perf_counter()
                paths[name] = Path(folder) / f"{name}-{variant.replace(' ', '_')}"
                paths[name].write_bytes(make(name))
                with Image.open(paths[name]) as made:
                    shape = f"{made.width}x{made.height} {made.mode}"
                size = paths[name].stat().st_size / 1024
                took = time.perf_counter() - started
                print(f"made {name} ({variant}, {shape}): {size:,.0f} KB in {took:.1f} s")
            for name, path in paths.items():
                worst = max(worst, _report(f"{name} ({variant})", [path]))
            together = f"together ({variant}): {' + '.join(TOGETHER)}"
            worst = max(worst, _report(together, [paths[n] for n in TOGETHER]))
        text = Path(folder) / "text.png"
        text.write_bytes(png_text())
        print(f"made png_text_chunks: {text.stat().st_size / 1024:,.0f} KB")
        worst = max(worst, _report("png_text_chunks", [text]))
        bomb = Path(folder) / "bomb.pdf"
        bomb.write_bytes(pdf_bomb())
        print(f"made pdf_bomb: {bomb.stat().st_size / 1024:,.0f} KB")
        worst = max(worst, _report("pdf_bomb", [bomb]))
    print(f"images worst_mib={worst:.0f}")


if __name__ == "__main__":
    main()
