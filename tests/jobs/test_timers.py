"""Timers, in both backends behind one interface: a conversation's job is replaced by id; moving
it keeps one job with new details; it runs once, about on time."""

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.jobs.backend import TimerBackend
from app.jobs.database_timers import DatabaseTimers
from app.jobs.kinds import JobKind
from app.jobs.liveness import OnStalled
from app.jobs.timers import Timers
from tests.conftest import TEST_DATABASE_URL, wait_for

Calls = list[tuple[float, dict[str, Any]]]
StartTimers = Callable[
    [Callable[..., Awaitable[Any]]], contextlib.AbstractAsyncContextManager[TimerBackend]
]


@contextlib.asynccontextmanager
async def database_timers(
    database_url: str, *, stalled_seconds: float = 3, on_stalled: OnStalled | None = None
) -> AsyncIterator[tuple[DatabaseTimers, AsyncEngine]]:
    """Procrastinate's timers on a migrated database, not started yet, and an engine of the
    test's own on it; both closed after the block."""
    engine = create_engine(database_url)
    await upgrade_to_head(engine)
    timers = DatabaseTimers(database_url, stalled_seconds=stalled_seconds, on_stalled=on_stalled)
    try:
        yield timers, engine
    finally:
        await timers.stop()
        await engine.dispose()


@pytest.fixture(
    params=[
        "apscheduler",
        pytest.param(
            "procrastinate",
            marks=pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's"),
        ),
    ]
)
def start_timers(request: pytest.FixtureRequest, database_url: str) -> StartTimers:
    """`async with start_timers(judge) as timers:` running timers of the parametrised backend
    whose judgments call `judge`."""

    @contextlib.asynccontextmanager
    async def run(judge: Callable[..., Awaitable[Any]]) -> AsyncIterator[TimerBackend]:
        async with contextlib.AsyncExitStack() as stack:
            timers: TimerBackend
            if request.param == "apscheduler":
                timers = Timers()
                stack.push_async_callback(timers.stop)
            else:
                timers, _ = await stack.enter_async_context(database_timers(database_url))
            timers.handle(JobKind.JUDGMENT, judge)
            await timers.start()
            yield timers

    return run


def recorder(calls: Calls) -> Callable[..., Awaitable[None]]:
    async def judge(**kwargs: Any) -> None:
        calls.append((time.time(), kwargs))

    return judge


async def test_setting_a_pending_timer_again_moves_it_and_runs_once_with_the_new_details(
    start_timers: StartTimers,
) -> None:
    calls: Calls = []
    async with start_timers(recorder(calls)) as timers:
        for latest_ts, delay in (("1.000001", 60), ("1.000002", 0.3)):
            await timers.set(
                JobKind.JUDGMENT,
                channel="C1",
                thread_ts="",
                run_at=time.time() + delay,
                latest_ts=latest_ts,
            )
        (timer,) = [t for t in await timers.list() if t.kind is JobKind.JUDGMENT]
        assert (timer.id, timer.latest_ts) == ("judgment:C1:", "1.000002")
        assert timer.seconds_left is not None and timer.seconds_left <= 0.3  # the newer one
        await wait_for(lambda: calls, what="the judgment")
        await asyncio.sleep(0.3)  # nothing else runs
        assert not [t for t in await timers.list() if t.kind is JobKind.JUDGMENT]
    assert [details for _, details in calls] == [
        {"channel": "C1", "thread_ts": "", "latest_ts": "1.000002"}
    ]


async def test_a_timer_moved_later_runs_at_its_new_time_only(start_timers: StartTimers) -> None:
    calls: Calls = []
    async with start_timers(recorder(calls)) as timers:
        started = time.time()
        # The first would run in 2 s: time enough, however busy the machine, to move it.
        for latest_ts, delay in (("1.000001", 2.0), ("1.000002", 2.5)):
            await timers.set(
                JobKind.JUDGMENT,
                channel="C1",
                thread_ts="1.000000",
                run_at=started + delay,
                latest_ts=latest_ts,
            )
        await wait_for(lambda: calls, what="the moved judgment")
        await asyncio.sleep(0.3)
    ((ran_at, details),) = calls
    assert ran_at >= started + 2.5
    assert details == {"channel": "C1", "thread_ts": "1.000000", "latest_ts": "1.000002"}


async def test_an_older_message_never_replaces_a_newer_ones_timer(
    start_timers: StartTimers,
) -> None:
    """Two instances may set the same conversation's timer at once, in either order."""
    calls: Calls = []
    async with start_timers(recorder(calls)) as timers:
        now = time.time()
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=now + 60, latest_ts="1.000002"
        )
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=now + 30, latest_ts="1.000001"
        )
        timer = await timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="")
        assert timer is not None and timer.latest_ts == "1.000002"


async def test_cancelling_a_timer_that_is_not_there_answers_false(
    start_timers: StartTimers,
) -> None:
    async with start_timers(recorder([])) as timers:
        assert not await timers.cancel(JobKind.JUDGMENT, channel="C1", thread_ts="")
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=time.time() + 60, latest_ts="1.1"
        )
        assert await timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="") is not None
        assert await timers.pending("C1", "")
        assert await timers.cancel(JobKind.JUDGMENT, channel="C1", thread_ts="")
        assert await timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="") is None
        assert not await timers.pending("C1", "")


async def test_recovery_keeps_a_pending_timer(start_timers: StartTimers) -> None:
    async with start_timers(recorder([])) as timers:
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=time.time() + 60, latest_ts="1.1"
        )
        await timers.set(
            JobKind.JUDGMENT,
            channel="C1",
            thread_ts="",
            run_at=time.time() + 5,
            latest_ts="1.2",
            replace=False,
        )
        timer = await timers.get(JobKind.JUDGMENT, channel="C1", thread_ts="")
        assert timer is not None and timer.latest_ts == "1.1"


async def test_timers_run_in_the_order_of_their_latest_times(start_timers: StartTimers) -> None:
    calls: Calls = []
    async with start_timers(recorder(calls)) as timers:
        now = time.time()
        moves = (("C1", 0.6), ("C2", 1.2), ("C3", 1.8), ("C1", 2.4), ("C3", 0.3))
        for n, (channel, delay) in enumerate(moves):
            await timers.set(
                JobKind.JUDGMENT,
                channel=channel,
                thread_ts="",
                run_at=now + delay,
                latest_ts=f"1.{n:06d}",  # each message newer than the last
            )
        listed = [t.channel for t in await timers.list() if t.kind is JobKind.JUDGMENT]
        assert listed == ["C3", "C2", "C1"]
        await wait_for(lambda: len(calls) == 3, what="three judgments")
    assert [details["channel"] for _, details in calls] == ["C3", "C2", "C1"]


async def silence(connection: AsyncConnection, worker: int | None = None) -> None:
    """Make a Procrastinate worker's heartbeat (every worker's, without one) an hour old."""
    await connection.execute(
        text(
            "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '1 hour'"
            " WHERE CAST(:worker AS bigint) IS NULL OR id = :worker"
        ),
        {"worker": worker},
    )


async def its_own_check(
    database_url: str, before: Callable[[AsyncConnection], Awaitable[None]]
) -> tuple[Calls, list[str]]:
    """A judgment whose first run does `before` in the database, runs the stalled check itself
    and reads its job's status then, and lasts 2 s more (the worker's other slots poll
    meanwhile). Its runs, and the job's status after the check."""
    calls: Calls = []
    statuses: list[str] = []
    async with database_timers(database_url) as (timers, engine):

        async def judge(**details: Any) -> None:
            calls.append((time.time(), details))
            if len(calls) == 1:
                async with engine.begin() as connection:
                    await before(connection)
                await timers.retry_stalled()
                async with engine.connect() as connection:  # handed back to the queue, or not
                    status = await connection.execute(
                        text("SELECT status FROM procrastinate_jobs WHERE task_name = 'judgment'")
                    )
                    statuses.append(status.scalar_one())
                await asyncio.sleep(2.0)

        async def finished() -> bool:
            async with engine.connect() as connection:
                left = await connection.execute(
                    text("SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'judgment'")
                )
                return left.scalar_one() == 0

        timers.handle(JobKind.JUDGMENT, judge)
        await timers.start()
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=time.time(), latest_ts="1.1"
        )
        await wait_for(lambda: calls, what="the judgment")
        await wait_for(finished, what="the judgment's job done")
        await asyncio.sleep(1.0)  # a second run would have begun (the worker polls each 0.5 s)
    return calls, statuses


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_a_worker_starved_past_its_heartbeat_never_runs_its_own_job_again(
    database_url: str,
) -> None:
    """A process starved of the CPU longer than JOB_STALLED_SECONDS may look for stalled jobs
    before its late heartbeat is sent: its own running jobs are not among them (it runs the
    check, so it is alive). The heartbeat made an hour old stands in for the starvation."""
    calls, _ = await its_own_check(database_url, silence)
    assert len(calls) == 1


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_a_worker_whose_row_was_pruned_never_runs_its_own_job_again(
    database_url: str,
) -> None:
    """Another instance's start prunes the workers whose heartbeat is late (Procrastinate's
    `prune_stalled_workers`): a live but starved process loses its row, and its running job
    its worker id (ON DELETE SET NULL), which the stalled check takes for a dead worker's. The
    process that runs the job does not run it again. The row deleted stands in for the prune."""

    async def pruned(connection: AsyncConnection) -> None:
        await connection.execute(text("DELETE FROM procrastinate_workers"))
        orphaned = await connection.execute(
            text(
                "SELECT count(*) FROM procrastinate_jobs"
                " WHERE task_name = 'judgment' AND status = 'doing' AND worker_id IS NULL"
            )
        )
        assert orphaned.scalar_one() == 1

    calls, statuses = await its_own_check(database_url, pruned)
    assert statuses == ["doing"] and len(calls) == 1


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_a_worker_whose_row_was_pruned_starts_again_and_runs_the_next_jobs(
    database_url: str,
) -> None:
    """A worker whose row another instance pruned fails at its next fetch (the job would name
    a worker that no longer exists): it is started again, with a row of its own, and runs the
    jobs that come after, instead of leaving this instance with no worker until a restart."""
    calls: Calls = []
    async with database_timers(database_url) as (timers, engine):

        async def judge(**details: Any) -> None:
            calls.append((time.time(), details))
            if len(calls) == 1:
                async with engine.begin() as connection:
                    await connection.execute(text("DELETE FROM procrastinate_workers"))

        timers.handle(JobKind.JUDGMENT, judge)
        await timers.start()
        for n, channel in enumerate(("C1", "C2")):
            await timers.set(
                JobKind.JUDGMENT,
                channel=channel,
                thread_ts="",
                run_at=time.time(),
                latest_ts=f"1.{n}",
            )
            await wait_for(
                lambda n=n: len(calls) > n, timeout=30, what=f"the judgment of {channel}"
            )
        assert timers.running
        async with engine.connect() as connection:
            workers = await connection.execute(text("SELECT count(*) FROM procrastinate_workers"))
            assert workers.scalar_one() == 1
    assert [details["channel"] for _, details in calls] == ["C1", "C2"]


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_a_worker_whose_connections_were_cut_starts_again_and_runs_the_next_jobs(
    database_url: str,
) -> None:
    """The database closes the worker's connections (a restart, a failover): its LISTEN
    connection's task fails, and Procrastinate's worker stops without raising. It is started
    again and runs the jobs that come after."""
    calls: Calls = []
    async with database_timers(database_url) as (timers, engine):

        async def cut() -> int:
            async with engine.connect() as connection:
                cut = await connection.execute(
                    text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE application_name = 'tomo-jobs' AND datname = current_database()"
                    )
                )
                return int(cut.scalar_one())

        timers.handle(JobKind.JUDGMENT, recorder(calls))
        await timers.start()
        await wait_for(cut, what="the worker's connections, cut")
        await timers.set(
            JobKind.JUDGMENT, channel="C1", thread_ts="", run_at=time.time(), latest_ts="1.1"
        )
        await wait_for(lambda: calls, timeout=60, what="the judgment, after the cut")
        assert timers.running


@pytest.mark.skipif(not TEST_DATABASE_URL, reason="Procrastinate is PostgreSQL's")
async def test_two_stalled_checks_at_once_run_a_dead_workers_job_again_once(
    database_url: str,
) -> None:
    """A slow `stalled` check and the next tick's (on any instance) both find a dead worker's
    job: the first runs it again, a live worker takes it, and the second must not hand it
    back to the queue while it runs. The live worker's taking it is written in SQL, in the
    second check's hand-back of the claim (the slow part of a real check)."""
    handed_back: list[dict[str, Any]] = []

    async def on_stalled(kind: JobKind, details: dict[str, Any]) -> None:
        handed_back.append(details)
        if len(handed_back) == 1:
            await asyncio.sleep(0.1)
            return
        await asyncio.sleep(0.5)  # meanwhile the first check has run the job again ...
        async with engine.begin() as connection:  # ... and a live worker has taken it
            await connection.execute(
                text("UPDATE procrastinate_jobs SET status = 'doing', worker_id = :live"),
                {"live": live},
            )

    stalled = database_timers(database_url, stalled_seconds=1, on_stalled=on_stalled)
    async with stalled as (timers, engine):
        await timers.set(
            JobKind.REPLY, channel="C1", thread_ts="", run_at=time.time() + 3600, latest_ts="1.1"
        )
        async with engine.begin() as connection:
            workers = "INSERT INTO procrastinate_workers DEFAULT VALUES RETURNING id"
            dead = (await connection.execute(text(workers))).scalar_one()
            live = (await connection.execute(text(workers))).scalar_one()
            await silence(connection, dead)
            await connection.execute(
                text("UPDATE procrastinate_jobs SET status = 'doing', worker_id = :dead"),
                {"dead": dead},
            )
        await asyncio.gather(timers.retry_stalled(), timers.retry_stalled())
        async with engine.connect() as connection:
            jobs = (
                await connection.execute(text("SELECT status, attempts FROM procrastinate_jobs"))
            ).all()
    assert [tuple(job) for job in jobs] == [("todo", 1)]  # run again once, by the first check
