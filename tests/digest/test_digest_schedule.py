"""`/tomo digest daily|weekly|off` and the `digest:{channel}` job (docs/how-tomo-works.md#digests):
the schedule read in TIMEZONE and kept in the database, the job in /admin/jobs with its next
run_at in UTC, /tomo status showing it; a due digest posted once and the next one scheduled,
after a restart too; a channel deleted drops it."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import ADMIN_TOKEN, StartTomo, Tomo, wait_for
from tests.digest.helpers import a_day, digest_answer, is_digest
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.response_url import FakeResponseUrl
from tests.slash import run_command
from tests.tools.workspace import store

BEARER = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
TOKYO = ZoneInfo("Asia/Tokyo")


def next_local(hour: int, minute: int, zone: ZoneInfo, *, weekday: int | None = None) -> datetime:
    """The next such wall-clock time after now, in UTC (worked out here, apart from tomo)."""
    moment = datetime.now(zone)
    candidate = moment.replace(hour=hour, minute=minute, second=0, microsecond=0)
    while candidate <= moment or (weekday is not None and candidate.weekday() != weekday):
        candidate = (candidate + timedelta(days=1)).replace(hour=hour, minute=minute)
    return candidate.astimezone(UTC)


async def digest_jobs(tomo: Tomo) -> list[dict[str, Any]]:
    jobs = (await tomo.client.get("/admin/jobs", headers=BEARER)).json()["jobs"]
    return [job for job in jobs if job["kind"] == "digest"]


async def schedule_row(tomo: Tomo) -> dict[str, Any] | None:
    rows = await tomo.rows("SELECT * FROM digest_schedule WHERE channel = 'C1'")
    return rows[0] if rows else None


async def due_soon(tomo: Tomo, seconds: float = 0.3) -> None:
    """The clock moved on: the schedule's next due time comes in `seconds` (written in the
    database, the truth), and its timer is set again from it, as a change would set it."""
    async with tomo.runtime.engine.begin() as connection:
        await connection.exec_driver_sql(
            "UPDATE digest_schedule SET next_due_at = %s WHERE channel = 'C1'"
            % (time.time() + seconds)
        )
    await tomo.runtime.digests.arm("C1")


@pytest.mark.parametrize(
    ("words", "answer_start"),
    [
        (
            "digest daily 09:00",
            "OK, I'll post a digest of what people said here every day at 09:00",
        ),
        ("まとめ 毎日 9時", "わかりました。このチャンネルの発言のまとめを毎日 09:00"),
    ],
)
async def test_a_daily_digest_in_tokyo_time_is_one_job_due_at_midnight_utc(
    start_tomo: StartTomo, hooks: FakeResponseUrl, words: str, answer_start: str
) -> None:
    async with start_tomo(TIMEZONE="Asia/Tokyo") as tomo:
        url = hooks.new_url()
        answer = await run_command(tomo, words, response_url=url, user="U2")
        (job,) = await digest_jobs(tomo)
        row = await schedule_row(tomo)
        status = await run_command(tomo, "status", response_url=url)
        shown = await run_command(tomo, "digest", response_url=url)
    expected = next_local(9, 0, TOKYO)
    assert answer["text"].startswith(answer_start) and "(Asia/Tokyo)" in answer["text"]
    assert (job["id"], job["kind"], job["channel"]) == ("digest:C1", "digest", "C1")
    assert job["run_at"] == expected.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert expected.hour == 0 and expected.minute == 0  # 09:00 in Tokyo is midnight UTC
    assert abs(job["seconds_left"] - (expected.timestamp() - time.time())) < 30
    assert row is not None and row["cadence"] == "daily" and row["set_by"] == "U2"
    assert row["next_due_at"] == expected.timestamp()
    assert f"<!date^{int(expected.timestamp())}^" in status["text"]
    assert (
        "Digest: every day at 09:00 (Asia/Tokyo)" in status["text"]
        or "まとめ: 毎日" in status["text"]
    )
    assert f"<!date^{int(expected.timestamp())}^" in shown["text"]


async def test_weekly_replaces_daily_and_off_drops_the_job(
    start_tomo: StartTomo, hooks: FakeResponseUrl
) -> None:
    async with start_tomo(TIMEZONE="Asia/Tokyo") as tomo:
        url = hooks.new_url()
        await run_command(tomo, "digest daily 09:00", response_url=url)
        answer = await run_command(tomo, "digest weekly mon 17:30", response_url=url)
        weekly = await digest_jobs(tomo)
        row = await schedule_row(tomo)
        off = await run_command(tomo, "digest off", response_url=url)
        after_off = await digest_jobs(tomo)
        gone = await schedule_row(tomo)
        again = await run_command(tomo, "digest off", response_url=url)
    expected = next_local(17, 30, TOKYO, weekday=0)
    assert "every Monday at 17:30 (Asia/Tokyo)" in answer["text"]
    assert [job["run_at"] for job in weekly] == [expected.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert expected.weekday() == 0 and (expected.hour, expected.minute) == (8, 30)
    assert row is not None and (row["cadence"], row["weekday"]) == ("weekly", 0)
    assert off["text"] == "OK, no more digests here." and after_off == [] and gone is None
    assert again["text"].startswith("This channel had no digest")


@pytest.mark.parametrize(
    "words", ["digest daily 25:00", "digest weekly 09:00", "digest hourly", "digest daily 9"]
)
async def test_a_schedule_tomo_cannot_read_gets_a_clear_answer_and_changes_nothing(
    start_tomo: StartTomo, hooks: FakeResponseUrl, words: str
) -> None:
    async with start_tomo(TIMEZONE="Europe/Berlin") as tomo:
        answer = await run_command(tomo, words, response_url=hooks.new_url())
        jobs = await digest_jobs(tomo)
        row = await schedule_row(tomo)
    assert (
        answer["text"].startswith("I can't read `") and "times are Europe/Berlin" in answer["text"]
    )
    assert jobs == [] and row is None


async def test_a_due_digest_is_posted_once_and_the_next_one_scheduled(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = digest_answer("**Lunch**\n- Decided: ramen [3]")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await a_day(tomo)
        await run_command(tomo, "digest daily 09:00", response_url=hooks.new_url())
        before = len(slack.posts())
        await due_soon(tomo)
        await slack.wait_for_posts(before + 1, timeout=30)
        await wait_for(lambda: digest_jobs(tomo), what="the next digest's job")
        (job,) = await digest_jobs(tomo)
        row = await schedule_row(tomo)
        (run,) = await tomo.rows("SELECT * FROM digest_run")
    expected = next_local(9, 0, ZoneInfo("UTC"))
    assert job["run_at"] == expected.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert row is not None and row["next_due_at"] == expected.timestamp()
    assert row["last_until"] == run["due_at"] and run["status"] == "posted"
    # The daily window: the last 24 hours before the due time (yesterday's news left out).
    assert run["until"] - run["since"] == 86400 and run["messages"] == 4
    assert len([r for r in model.requests if is_digest(r)]) == 1
    assert len(slack.posts()) == before + 1


async def test_a_digest_due_while_tomo_was_down_is_posted_once_after_the_restart(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    model.responder = digest_answer("- Asked: who reviews the script [4]")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await a_day(tomo)
        await run_command(tomo, "digest daily 09:00", response_url=hooks.new_url())
        async with tomo.runtime.engine.begin() as connection:
            await connection.exec_driver_sql(
                "UPDATE digest_schedule SET next_due_at = %s" % (time.time() - 600)
            )
        before = len(slack.posts())
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:  # the restart
        await slack.wait_for_posts(before + 1, timeout=30)
        await wait_for(lambda: digest_jobs(tomo), what="the next digest's job")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:  # and another: nothing more
        jobs = await digest_jobs(tomo)
        runs = await tomo.rows("SELECT status FROM digest_run")
    assert len(slack.posts()) == before + 1
    assert len([r for r in model.requests if is_digest(r)]) == 1
    assert runs == [{"status": "posted"}] and len(jobs) == 1


async def test_a_post_slack_left_unsettled_is_looked_up_and_not_posted_twice(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, hooks: FakeResponseUrl
) -> None:
    """Slack took the post and answered 500: the run stops, owed; the next run finds the post
    by its metadata and posts nothing more."""
    model.responder = digest_answer("- Decided: ramen [2]")
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await a_day(tomo)
        await run_command(tomo, "digest daily 09:00", response_url=hooks.new_url())
        before = len(slack.posts())
        slack.fail("chat.postMessage", status=500, accept=True)
        await due_soon(tomo)
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM digest_run WHERE status = 'interrupted'"),
            what="the run left owed",
        )
        # The run's job ends by setting its retry (a minute on): armed before that, the timer
        # set here would be replaced by it, and the run would wait the minute.
        await wait_for(lambda: retry_set(tomo), what="the retry set")
        await tomo.runtime.digests.arm("C1")  # as the retry a minute later would
        await wait_for(
            lambda: tomo.rows("SELECT 1 FROM digest_run WHERE status = 'posted'"),
            what="the run finished",
        )
        row = await schedule_row(tomo)
    assert len(slack.posts()) == before + 1
    assert len([r for r in model.requests if is_digest(r)]) == 1  # its text was stored
    assert row is not None and row["next_due_at"] > time.time()


async def retry_set(tomo: Tomo) -> bool:
    """Whether C1's digest timer is set well after its due time (passed): a run's retry."""
    return any((t.seconds_left or 0.0) > 1.0 for t in await tomo.timers("digest"))


@pytest.mark.parametrize(
    "event", [{"type": "channel_deleted", "channel": "C1"}, {"type": "app_uninstalled"}]
)
async def test_a_deleted_channel_or_an_uninstall_drops_the_digest(
    start_tomo: StartTomo, hooks: FakeResponseUrl, event: dict[str, str]
) -> None:
    async with start_tomo() as tomo:
        await store(tomo, "C1", "hello", ago=60)
        await run_command(tomo, "digest daily 09:00", response_url=hooks.new_url())
        assert len(await digest_jobs(tomo)) == 1
        assert (await tomo.event(event)).status_code == 200
        await wait_for(lambda: _gone(tomo), what="the schedule erased")
        await wait_for(lambda: _no_jobs(tomo), what="the job dropped")


async def _gone(tomo: Tomo) -> bool:
    return await schedule_row(tomo) is None


async def _no_jobs(tomo: Tomo) -> bool:
    return await digest_jobs(tomo) == []
