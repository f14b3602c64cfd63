"""Bytes of files held in memory at once (downloaded, not yet read), within a bound: a file
waits until those before it are done rather than add up past it; one larger than the whole
waits to be alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ByteBudget:
    def __init__(self, total: int) -> None:
        self.total = total
        self._held = 0
        self._changed = asyncio.Condition()

    @property
    def held(self) -> int:
        return self._held

    @asynccontextmanager
    async def holding(self, size: int) -> AsyncIterator[None]:
        """Hold `size` bytes (at most the whole) while the block runs."""
        size = min(max(size, 0), self.total)
        async with self._changed:
            await self._changed.wait_for(lambda: self._held + size <= self.total)
            self._held += size
        try:
            yield
        finally:
            async with self._changed:
                self._held -= size
                self._changed.notify_all()
