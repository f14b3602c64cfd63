"""The stand-ins' recorded calls (bench/standins.py's GET /calls, which hands each call over
once) as running totals, and waits on them: replies begun and finished, judgments, and the
tool rounds (bench/busy_day_tools.py's ToolTally)."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Callable

from bench import standins
from bench.busy_day_tools import TOOLS, ToolTally


class Calls:
    def __init__(self, port: int, *, tools: tuple[str, ...] = TOOLS) -> None:
        self._url = f"http://127.0.0.1:{port}/calls"
        self.posts = 0  # replies begun: a post, or a stream started
        self.finished = 0  # replies done: posted whole, or their stream stopped
        self.judgments = 0
        self.tools = ToolTally(tools)

    def read(self) -> None:
        with urllib.request.urlopen(self._url, timeout=5) as answer:
            calls = json.load(answer)["calls"]
        self.posts += sum(1 for call in calls if call["method"] in standins.POSTS)
        self.finished += sum(1 for call in calls if call["method"] in standins.FINISHED)
        self.judgments += sum(1 for call in calls if call["method"] == "judgment")
        self.tools.add(calls)

    async def until(self, done: Callable[[], bool], what: str, timeout: float = 300.0) -> None:
        """Read until `done()`; RuntimeError naming `what` after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            self.read()
            if done():
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} within {timeout:.0f} s")
            await asyncio.sleep(0.2)

    async def until_posts(self, count: int) -> None:
        await self.until(lambda: self.posts >= count, f"{count} posts were not made")

    async def until_finished(self, count: int) -> None:
        await self.until(lambda: self.finished >= count, f"{count} replies were not finished")

    async def until_judged(self, count: int) -> None:
        await self.until(lambda: self.judgments >= count, f"{count} judgments were not made")
