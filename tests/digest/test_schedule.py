"""When a digest is due (app.digest.schedule, app.commands.digest_words): the words read, the next
due time in a zone, daylight-saving changes keeping the wall-clock time; and TIMEZONE checked at
start-up."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.commands.digest_words import BadSchedule, parse_schedule
from app.digest.schedule import Cadence, Schedule, next_due
from app.settings import SettingsError, load_settings

NEW_YORK = ZoneInfo("America/New_York")
BERLIN = ZoneInfo("Europe/Berlin")


def at(zone: ZoneInfo, *when: int) -> float:
    return datetime(*when, tzinfo=zone).timestamp()  # type: ignore[misc]


def local(epoch: float, zone: ZoneInfo) -> tuple[int, int, int, int, int]:
    moment = datetime.fromtimestamp(epoch, zone)
    return moment.month, moment.day, moment.hour, moment.minute, moment.weekday()


@pytest.mark.parametrize(
    ("words", "schedule"),
    [
        ("daily 09:00", Schedule(Cadence.DAILY, 9, 0)),
        ("daily 9:05", Schedule(Cadence.DAILY, 9, 5)),
        ("weekly mon 17:30", Schedule(Cadence.WEEKLY, 17, 30, 0)),
        ("weekly Sunday 00:00", Schedule(Cadence.WEEKLY, 0, 0, 6)),
        ("毎日 9時", Schedule(Cadence.DAILY, 9, 0)),
        ("毎週 金曜 17時30分", Schedule(Cadence.WEEKLY, 17, 30, 4)),
        # Full-width letters, digits, spaces and colon, as a Japanese keyboard may type them.
        (
            "\uff57\uff45\uff45\uff4b\uff4c\uff59\u3000\uff46\uff52\uff49\u3000\uff12\uff13\uff1a\uff15\uff19",
            Schedule(Cadence.WEEKLY, 23, 59, 4),
        ),
    ],
)
def test_schedules_are_read(words: str, schedule: Schedule) -> None:
    assert parse_schedule(words) == schedule


@pytest.mark.parametrize(
    "words",
    ["", "daily", "daily 24:00", "daily 9", "daily 09:60", "weekly 09:00", "monthly 1 09:00"],
)
def test_anything_else_is_refused(words: str) -> None:
    with pytest.raises(BadSchedule):
        parse_schedule(words)


@given(st.text(max_size=40))
def test_any_text_is_read_or_refused_never_an_error(words: str) -> None:
    try:
        schedule = parse_schedule(words)
    except BadSchedule:
        return
    assert 0 <= schedule.hour < 24 and 0 <= schedule.minute < 60


def test_daily_keeps_the_wall_clock_time_across_both_daylight_saving_changes() -> None:
    daily = Schedule(Cadence.DAILY, 9, 0)
    # New York: clocks go forward on 2026-03-08 and back on 2026-11-01.
    for start in (at(NEW_YORK, 2026, 3, 6, 12), at(NEW_YORK, 2026, 10, 30, 12)):
        due, hours = start, []
        for _ in range(4):
            due = next_due(daily, after=due, zone=NEW_YORK)
            assert local(due, NEW_YORK)[2:4] == (9, 0)
            hours.append(datetime.fromtimestamp(due, UTC).hour)
        assert len(set(hours)) == 2  # the same 09:00, an hour apart in UTC across the change
    spring = [next_due(daily, after=at(NEW_YORK, 2026, 3, d, 12), zone=NEW_YORK) for d in (6, 7)]
    assert spring[1] - spring[0] == 23 * 3600  # the short day


def test_a_time_the_change_skips_comes_an_hour_later_and_a_repeated_one_the_first_time() -> None:
    skipped = next_due(
        Schedule(Cadence.DAILY, 2, 30), after=at(BERLIN, 2026, 3, 29, 0), zone=BERLIN
    )
    assert local(skipped, BERLIN)[:4] == (3, 29, 3, 30)
    repeated = Schedule(Cadence.DAILY, 2, 30)
    first = next_due(repeated, after=at(BERLIN, 2026, 10, 25, 0), zone=BERLIN)
    assert datetime.fromtimestamp(first, UTC).hour == 0  # 02:30 CEST, not CET
    after_it = next_due(repeated, after=first, zone=BERLIN)
    assert local(after_it, BERLIN)[:4] == (10, 26, 2, 30)  # once that day, then the next


def test_weekly_is_due_on_its_day_strictly_after_the_moment() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    weekly = Schedule(Cadence.WEEKLY, 17, 30, 0)
    monday = at(tokyo, 2026, 11, 30, 17, 30)  # a Monday, at the time itself
    due = next_due(weekly, after=monday, zone=tokyo)
    assert due - monday == 7 * 86400
    assert next_due(weekly, after=monday - 1, zone=tokyo) == monday
    assert datetime.fromtimestamp(monday, UTC).strftime("%a %H:%M") == "Mon 08:30"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", "../../etc/passwd", "UTC+9"])
def test_a_timezone_that_is_no_iana_name_stops_start_up_naming_it(zone: str) -> None:
    with pytest.raises(SettingsError) as stopped:
        load_settings(
            _env_file=None, SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN="xoxb-1", TIMEZONE=zone
        )
    assert "TIMEZONE" in str(stopped.value)
    assert "IANA" in str(stopped.value) or not zone  # an empty one is said to be empty


def test_the_default_timezone_is_utc() -> None:
    settings = load_settings(_env_file=None, SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN="xoxb-1")
    assert settings.TIMEZONE == "UTC" and str(settings.timezone) == "UTC"
