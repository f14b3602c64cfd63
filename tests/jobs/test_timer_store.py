"""TimerStore keeps APScheduler's job store contract: jobs in time order, paused ones last."""

from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.job import Job
from apscheduler.jobstores.base import ConflictingIdError, JobLookupError
from apscheduler.triggers.date import DateTrigger

from app.jobs.timer_store import TimerScheduler, TimerStore

START = datetime(2026, 1, 1, tzinfo=UTC)


def job(scheduler: TimerScheduler, identifier: str, seconds: float | None) -> Job:
    when = None if seconds is None else START + timedelta(seconds=seconds)
    return Job(
        scheduler,
        id=identifier,
        func=print,
        args=(),
        kwargs={},
        name=identifier,
        trigger=DateTrigger(START, timezone=UTC),
        executor="default",
        next_run_time=when,
        misfire_grace_time=None,
        coalesce=True,
        max_instances=1,
    )


def test_jobs_come_in_time_order_and_due_jobs_up_to_now() -> None:
    scheduler, store = TimerScheduler(timezone=UTC), TimerStore()
    for identifier, seconds in (("b", 20.0), ("paused", None), ("a", 10.0), ("c", 30.0)):
        store.add_job(job(scheduler, identifier, seconds))
    assert [j.id for j in store.get_all_jobs()] == ["a", "b", "c", "paused"]
    assert store.get_next_run_time() == START + timedelta(seconds=10)
    assert [j.id for j in store.get_due_jobs(START + timedelta(seconds=20))] == ["a", "b"]

    moved = store.lookup_job("a")
    assert moved is not None
    moved.next_run_time = START + timedelta(seconds=40)
    store.update_job(moved)
    store.remove_job("b")
    assert [j.id for j in store.get_all_jobs()] == ["c", "a", "paused"]
    assert store.lookup_job("b") is None

    with pytest.raises(ConflictingIdError):
        store.add_job(job(scheduler, "c", 1.0))
    with pytest.raises(JobLookupError):
        store.remove_job("b")
    with pytest.raises(JobLookupError):
        store.update_job(job(scheduler, "b", 1.0))
    store.remove_all_jobs()
    assert store.get_all_jobs() == [] and store.get_next_run_time() is None


def test_jobs_are_counted_by_name_as_they_come_go_and_are_renamed() -> None:
    scheduler, store = TimerScheduler(timezone=UTC), TimerStore()
    for identifier, seconds in (("a", 10.0), ("b", 20.0), ("c", None)):
        added = job(scheduler, identifier, seconds)
        added.name = "judgment" if identifier != "c" else "reply"
        store.add_job(added)
    assert (store.count("judgment"), store.count("reply"), store.count("memory")) == (2, 1, 0)

    moved = store.lookup_job("a")
    assert moved is not None
    moved.next_run_time = START + timedelta(seconds=40)
    store.update_job(moved)  # moved, not renamed
    assert (store.count("judgment"), store.count("reply")) == (2, 1)
    moved.name = "reply"
    store.update_job(moved)
    assert (store.count("judgment"), store.count("reply")) == (1, 2)

    store.remove_job("b")
    assert (store.count("judgment"), store.count("reply")) == (0, 2)
    with pytest.raises(JobLookupError):
        store.remove_job("b")
    assert store.count("judgment") == 0
    store.remove_all_jobs()
    assert store.count("reply") == 0
