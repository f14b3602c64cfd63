"""The digest schedules in the database (`digest_schedule`, app.db.models.DigestSchedule): set,
read, dropped, and moved on to the next due time once a digest is done."""

from __future__ import annotations

import time
from zoneinfo import ZoneInfo

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import DigestSchedule
from app.digest.schedule import Cadence, Schedule, next_due

_TABLE = DigestSchedule.__table__  # type: ignore[attr-defined]


def schedule_of(row: DigestSchedule) -> Schedule:
    return Schedule(Cadence(row.cadence), row.hour, row.minute, row.weekday)


async def set_schedule(
    engine: AsyncEngine, *, channel: str, schedule: Schedule, user: str, zone: ZoneInfo
) -> DigestSchedule:
    """The channel's schedule, due next at its first time from now; where the previous
    digest ended is kept."""
    now = time.time()
    values = {
        "cadence": schedule.cadence.value,
        "weekday": schedule.weekday,
        "hour": schedule.hour,
        "minute": schedule.minute,
        "next_due_at": next_due(schedule, after=now, zone=zone),
        "set_by": user,
        "set_at": now,
    }
    statement = upsert(engine.dialect.name, DigestSchedule).values(channel=channel, **values)
    statement = statement.on_conflict_do_update(index_elements=["channel"], set_=values)
    async with engine.begin() as connection:
        await connection.execute(statement)
        found = await read_schedule(connection, channel)
    assert found is not None
    return found


async def drop_schedule(engine: AsyncEngine, channel: str) -> bool:
    async with engine.begin() as connection:
        result = await connection.execute(
            delete(DigestSchedule).where(col(DigestSchedule.channel) == channel)
        )
    return bool(result.rowcount)


async def read_schedule(connection: AsyncConnection, channel: str) -> DigestSchedule | None:
    found = await connection.execute(select(_TABLE).where(_TABLE.c.channel == channel))
    row = found.mappings().first()
    return DigestSchedule.model_validate(dict(row)) if row else None


async def all_schedules(connection: AsyncConnection) -> list[DigestSchedule]:
    found = await connection.execute(select(_TABLE).order_by(_TABLE.c.channel))
    return [DigestSchedule.model_validate(dict(row)) for row in found.mappings()]


async def advance(
    connection: AsyncConnection,
    *,
    channel: str,
    due_at: float,
    zone: ZoneInfo,
    until: float | None,
    now: float | None = None,
) -> float | None:
    """The schedule due at `due_at` moves on to its next due time after now (and, with
    `until`, the next digest starts there); None when it is gone or was changed meanwhile."""
    row = await read_schedule(connection, channel)
    if row is None or row.next_due_at != due_at:
        return None
    moment = time.time() if now is None else now
    following = next_due(schedule_of(row), after=max(moment, due_at), zone=zone)
    values: dict[str, float] = {"next_due_at": following}
    if until is not None:
        values["last_until"] = until
    result = await connection.execute(
        update(DigestSchedule)
        .where(col(DigestSchedule.channel) == channel, col(DigestSchedule.next_due_at) == due_at)
        .values(**values)
    )
    return following if result.rowcount else None


async def note_until(connection: AsyncConnection, *, channel: str, until: float) -> None:
    """A digest asked for now covered up to `until`: the next scheduled one starts there."""
    last = col(DigestSchedule.last_until)
    await connection.execute(
        update(DigestSchedule)
        .where(col(DigestSchedule.channel) == channel, or_(last.is_(None), last < until))
        .values(last_until=until)
    )
