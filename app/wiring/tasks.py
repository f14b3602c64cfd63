"""The web process's background tasks, each by its name (`identity`, `slack-check`, `purge`, ...):
started off the request's path, cancelled at the stop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Background:
    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, None], name: str) -> None:
        self.add(asyncio.create_task(coroutine, name=name))

    def add(self, task: asyncio.Task[None]) -> None:
        """A task started elsewhere, kept (and cancelled at the stop) until it is done."""
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    def any_named(self, *names: str) -> bool:
        return any(t.get_name() in names for t in self.running)

    def cancel(self, *names: str) -> None:
        for task in list(self.running):
            if task.get_name() in names:
                task.cancel()

    async def cancel_all(self) -> None:
        for task in list(self.running):
            task.cancel()
        await asyncio.gather(*self.running, return_exceptions=True)
