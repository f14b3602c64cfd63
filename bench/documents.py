"""Reading a PDF's text: how long the bounds on it (app/files/documents.py) let a bad PDF take.

    .venv/bin/python -m bench.documents            # 5 runs of each
    .venv/bin/python -m bench.documents --runs 10

Two crafted PDFs (tests/files/samples.py writes them, compressed as PDF writers do): a page of
400,000 drawing instructions in under 10 KB, which pypdf alone takes seconds over (skipped by
its size: target under 1.5 s for the whole file), and thirty pages just under that size (no
page is begun after READ_SECONDS: target under READ_SECONDS + 1.5 s). These budgets were
assertions of the test suite, where a busy machine failed them; here they are measured.
Last line: `documents trap_max_s=X heavy_max_s=Y`.
"""

from __future__ import annotations

import argparse
import time

from app.domain import SharedFile
from app.files.documents import READ_SECONDS, document_text
from bench.common import machine
from tests.files.samples import pdf

TRAP_BUDGET = 1.5
HEAVY_BUDGET = READ_SECONDS + 1.5


def timed(file: SharedFile, data: bytes) -> tuple[float, str]:
    started = time.perf_counter()
    text = document_text(file, data)
    return time.perf_counter() - started, text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(machine())
    file = SharedFile(id="F1", name="trip.pdf", mimetype="application/pdf", filetype="pdf")
    trap = pdf(b"BT /F1 12 Tf " + b"1 0 Td " * 400_000 + b"(x) Tj ET", ["Budget: 80,000"])
    heavy = pdf(*[b"BT /F1 12 Tf " + b"1 0 Td " * 36_000 + b"(page) Tj ET"] * 30)
    trap_times, heavy_times = [], []
    for _ in range(runs):
        seconds, _text = timed(file, trap)
        trap_times.append(seconds)
        seconds, text = timed(file, heavy)
        heavy_times.append(seconds)
        print(
            f"trap {trap_times[-1]:.2f} s; thirty heavy pages {seconds:.2f} s, "
            f"{text.count('page')} read"
        )
    for name, times, budget in (
        ("trap", trap_times, TRAP_BUDGET),
        ("heavy", heavy_times, HEAVY_BUDGET),
    ):
        verdict = "within" if max(times) < budget else "OVER"
        print(f"{name}: max {max(times):.2f} s, {verdict} the budget of {budget:g} s")
    print(f"documents trap_max_s={max(trap_times):.2f} heavy_max_s={max(heavy_times):.2f}")


if __name__ == "__main__":
    main()
