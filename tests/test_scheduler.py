"""Timers: a conversation's job is replaced by id; moving it keeps one job with new details."""

import asyncio
import time
from typing import Any

from app.scheduler import JUDGMENT, Timers


async def test_setting_a_pending_timer_again_moves_it_and_runs_once_with_the_new_details() -> None:
    calls: list[dict[str, Any]] = []

    async def judge(**kwargs: Any) -> None:
        calls.append(kwargs)

    timers = Timers()
    timers.start()
    try:
        timers.set(
            JUDGMENT,
            channel="C1",
            thread_ts="",
            run_at=time.time() + 60,
            func=judge,
            latest_ts="1.000001",
        )
        timers.set(
            JUDGMENT,
            channel="C1",
            thread_ts="",
            run_at=time.time() + 0.2,
            func=judge,
            latest_ts="1.000002",
        )
        (timer,) = timers.list()
        assert (timer.id, timer.latest_ts) == ("judgment:C1:", "1.000002")
        assert timer.seconds_left is not None and timer.seconds_left < 1
        await asyncio.sleep(0.5)
    finally:
        timers.shutdown()
    assert calls == [{"channel": "C1", "thread_ts": "", "latest_ts": "1.000002"}]
    assert timers.list() == []
