"""Giving freed memory back to the system once the job worker is idle (docs/BENCHMARKS.md#
memory): after a large picture or document, glibc's malloc keeps the freed pages for reuse,
and a container counts them until `malloc_trim` returns them. Elsewhere (no glibc) nothing."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    return trim  # type: ignore[no-any-return]


def give_back() -> None:
    """Return the heap's free pages to the system (a few milliseconds)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
