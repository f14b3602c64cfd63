"""How log lines reach stderr (app.observability.logs): on the event loop, the INFO lines of one
turn are
written together once the loop has run what was ready; a WARNING or worse, and a line logged
outside the loop, at once, after the lines gathered before it. No line is lost or reordered."""

from __future__ import annotations

import asyncio
import io
import logging
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from app.observability.logs import setup_logging


class Writes(io.StringIO):
    """stderr as the handler sees it, counting its writes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)

    def lines(self) -> list[str]:
        return [line.rsplit(": ", 1)[-1] for line in self.getvalue().splitlines()]


@pytest.fixture
def stderr(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], Writes]]:
    """Call it in the test's body (pytest puts its own capture back in sys.stderr after the
    fixtures ran): tomo's logging set up, writing to a Writes in sys.stderr's place."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)

    def watch() -> Writes:
        writes = Writes()
        monkeypatch.setattr(sys, "stderr", writes)
        setup_logging(level="INFO", fmt="text")
        return writes

    yield watch
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


log = logging.getLogger("tests.log_writes")


async def test_a_turns_info_lines_are_written_together_when_the_loop_turns(
    stderr: Callable[[], Writes],
) -> None:
    writes = stderr()
    for n in range(50):
        log.info("event %d routed", n)
    assert writes.writes == []  # nothing yet: the loop has not turned
    await asyncio.sleep(0)
    assert len(writes.writes) == 1
    assert writes.lines() == [f"event {n} routed" for n in range(50)]


async def test_a_warning_is_written_at_once_after_the_lines_before_it(
    stderr: Callable[[], Writes],
) -> None:
    writes = stderr()
    log.info("first")
    log.info("second")
    log.warning("third")
    assert writes.lines() == ["first", "second", "third"]
    log.info("fourth")
    await asyncio.sleep(0)
    assert writes.lines() == ["first", "second", "third", "fourth"]


async def test_a_line_from_another_thread_is_written_at_once_in_its_place(
    stderr: Callable[[], Writes],
) -> None:
    writes = stderr()
    log.info("on the loop")
    worker = threading.Thread(target=lambda: log.info("from a thread"))
    worker.start()
    worker.join()
    assert writes.lines() == ["on the loop", "from a thread"]
    await asyncio.sleep(0)
    assert writes.lines() == ["on the loop", "from a thread"]


def test_outside_an_event_loop_every_line_is_written_at_once(stderr: Callable[[], Writes]) -> None:
    writes = stderr()
    log.info("one")
    assert writes.lines() == ["one"]
    log.info("two")
    assert writes.lines() == ["one", "two"]
    assert len(writes.writes) == 2
