"""How much work one reply's tools may do (docs/how-tomo-works.md#tools): at most MAX_CALLS
calls run in one round, and its tools together have SECONDS; a call still running then is
stopped, and the calls after it are not run. Each run of a reply through the tool loop is a
ToolRun: whom it is for, the URLs given to it so far (app.tools.given, its own copy: a reply
run again starts from what people wrote), the seconds its tools have left, and the line the
reply must end with once a call waits for a person's approval."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import replace

from app.observability.metrics import ToolOutcome, count_tool_call
from app.tools.base import Asker, ToolResult, failed

MAX_CALLS = 8  # tool calls run in one round
SECONDS = 60.0  # of tools in one reply, its rounds together


class ToolRun:
    def __init__(self, asker: Asker, *, seconds: float) -> None:
        self.asker = replace(asker, given=asker.given.copy())
        self.seconds = seconds
        self.left = seconds
        # Set by a call that asked for a person's approval: the reply's last line (ToolResult).
        self.last_line: str | None = None

    @property
    def out_of_time(self) -> bool:
        return self.left <= 0

    async def within_time(self, call: Awaitable[ToolResult], *, tool: str) -> ToolResult:
        """The call's result while the tools have time left; stopped when they run out, not
        run after (`tool`: its metrics label)."""
        if self.out_of_time:
            _close(call)
            count_tool_call(tool, ToolOutcome.NOT_RUN)
            return failed(f"not run: {self._spent()}")
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.left):
                return await call
        except TimeoutError:
            count_tool_call(tool, ToolOutcome.STOPPED)
            return failed(f"stopped: {self._spent()}")
        finally:
            self.left -= time.monotonic() - started

    def _spent(self) -> str:
        return (
            f"this reply's tools have used their {self.seconds:g} seconds; answer with what "
            "you have"
        )


def not_run(max_calls: int, *, tool: str) -> ToolResult:
    """The result of a call past the round's `max_calls`."""
    count_tool_call(tool, ToolOutcome.NOT_RUN)
    return failed(
        f"not run: at most {max_calls} tool calls run in one round; ask for what you still "
        "need in the next round"
    )


def _close(call: Awaitable[ToolResult]) -> None:
    close = getattr(call, "close", None)  # a coroutine never awaited, closed without a warning
    if close is not None:
        close()
