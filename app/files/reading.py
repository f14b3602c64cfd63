"""Where the content of a file is read: one thread of the process, one file at a time.

Decoding a picture, a PDF's text and an HTML page's main text (a fetched page) each take
memory in proportion to what they read: up to about a hundred MB for the largest picture still
read, tens for a PDF whose streams inflate or a large page's tree. Read one at a time, several
files at once (a message with many, replies to several, a page fetched meanwhile) cost what the
largest of them does, not their sum; and the one thread keeps one malloc arena, where threads
of their own would each keep the memory they freed. After each file the heap's free pages go
back to the system (app.jobs.heap), so what one file freed is not counted while the next is
read."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from app.jobs.heap import give_back

P = ParamSpec("P")
T = TypeVar("T")

_READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tomo-reader")


def _given_back(work: Callable[[], T]) -> T:
    try:
        return work()
    finally:
        give_back()


def read_now(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work` on the reading thread, waiting here (and behind the files asked for before)."""
    return _READER.submit(_given_back, functools.partial(work, *args, **kwargs)).result()


async def read(work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work` on the reading thread, awaited: no thread is held while it waits its turn."""
    return await asyncio.wrap_future(
        _READER.submit(_given_back, functools.partial(work, *args, **kwargs))
    )
