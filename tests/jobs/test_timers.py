"""Timers: a conversation's job is replaced by id; moving it keeps one job with new details."""

import asyncio
import time
from typing import Any

from app.jobs.kinds import JobKind
from app.jobs.timers import Timers


async def test_setting_a_pending_timer_again_moves_it_and_runs_once_with_the_new_details() -> None:
    calls: list[dict[str, Any]] = []

    async def judge(**kwargs: Any) -> None:
        calls.append(kwargs)

    timers = Timers()
    timers.start()
    try:
        timers.set(
            JobKind.JUDGMENT,
            channel="C1",
            thread_ts="",
            run_at=time.time() + 60,
            func=judge,
            latest_ts="1.000001",
        )
        timers.set(
            JobKind.JUDGMENT,
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


async def test_a_timer_moved_later_runs_at_its_new_time_only() -> None:
    calls: list[tuple[float, dict[str, Any]]] = []

    async def judge(**kwargs: Any) -> None:
        calls.append((time.time(), kwargs))

    timers = Timers()
    timers.start()
    started = time.time()
    try:
        for latest_ts, delay in (("1.000001", 0.1), ("1.000002", 0.4)):
            timers.set(
                JobKind.JUDGMENT,
                channel="C1",
                thread_ts="1.000000",
                run_at=started + delay,
                func=judge,
                latest_ts=latest_ts,
            )
        await asyncio.sleep(0.25)
        assert calls == []
        await asyncio.sleep(0.4)
    finally:
        timers.shutdown()
    ((ran_at, details),) = calls
    assert ran_at >= started + 0.4
    assert details == {"channel": "C1", "thread_ts": "1.000000", "latest_ts": "1.000002"}


async def test_cancelling_a_timer_that_is_not_there_answers_false() -> None:
    async def judge(**kwargs: Any) -> None:
        pass

    timers = Timers()
    timers.start()
    try:
        assert not timers.cancel(JobKind.JUDGMENT, channel="C1", thread_ts="")
        timers.set(
            JobKind.JUDGMENT,
            channel="C1",
            thread_ts="",
            run_at=time.time() + 60,
            func=judge,
            latest_ts="1.1",
        )
        assert timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="") is not None
        assert timers.cancel(JobKind.JUDGMENT, channel="C1", thread_ts="")
        assert timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="") is None
    finally:
        timers.shutdown()


async def test_timers_run_in_the_order_of_their_latest_times() -> None:
    ran: list[str] = []

    async def judge(**kwargs: Any) -> None:
        ran.append(kwargs["channel"])

    timers = Timers()
    timers.start()
    now = time.time()
    try:
        for channel, delay in (("C1", 0.1), ("C2", 0.2), ("C3", 0.3), ("C1", 0.4), ("C3", 0.05)):
            timers.set(
                JobKind.JUDGMENT,
                channel=channel,
                thread_ts="",
                run_at=now + delay,
                func=judge,
                latest_ts="1.1",
            )
        assert [t.channel for t in timers.list()] == ["C3", "C2", "C1"]
        await asyncio.sleep(0.6)
    finally:
        timers.shutdown()
    assert ran == ["C3", "C2", "C1"]
