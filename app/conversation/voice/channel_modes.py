"""A channel's mode (docs/how-tomo-works.md#tomo): `normal`, `quiet` (until a time, or until
changed) or `mentions_only`. Stored in `channel_control`, so it survives restarts; a quiet mode
whose time has passed reads as normal, with nothing to clean up."""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import ChannelControl


class Mode(StrEnum):
    NORMAL = "normal"
    QUIET = "quiet"
    MENTIONS_ONLY = "mentions_only"


@dataclass(frozen=True)
class ChannelMode:
    channel: str
    mode: Mode = Mode.NORMAL
    quiet_until: float | None = None  # for QUIET: when it ends; None: until changed
    changed_by: str = ""
    changed_at: float = 0.0
    forgotten_at: float | None = None
    ended_at: float | None = None  # a quiet mode that has ended by itself: when

    @property
    def holds_back(self) -> bool:
        """No autonomous reply here now (mentions and DMs are still answered)."""
        return self.mode is not Mode.NORMAL


def effective(row: ChannelControl | None, *, channel: str, now: float) -> ChannelMode:
    """The mode a stored row means at `now`."""
    if row is None:
        return ChannelMode(channel)
    try:
        mode = Mode(row.mode)
    except ValueError:  # a mode this version does not know holds nothing back
        mode = Mode.NORMAL
    ended_at = None
    if mode is Mode.QUIET and row.quiet_until is not None and row.quiet_until <= now:
        mode, ended_at = Mode.NORMAL, row.quiet_until
    return ChannelMode(
        channel=channel,
        mode=mode,
        quiet_until=row.quiet_until if mode is Mode.QUIET else None,
        changed_by=row.changed_by,
        changed_at=row.changed_at,
        forgotten_at=row.forgotten_at,
        ended_at=ended_at,
    )


def _row(values: dict[str, object]) -> ChannelControl:
    return ChannelControl.model_validate(values)


async def read_mode(
    connection: AsyncConnection, channel: str, *, now: float | None = None
) -> ChannelMode:
    result = await connection.execute(
        select(ChannelControl.__table__).where(col(ChannelControl.channel) == channel)  # type: ignore[attr-defined]
    )
    found = result.mappings().first()
    return effective(
        _row(dict(found)) if found else None,
        channel=channel,
        now=time.time() if now is None else now,
    )


async def all_modes(connection: AsyncConnection, *, now: float | None = None) -> list[ChannelMode]:
    """Every channel whose mode or memories someone changed, most recently changed first."""
    result = await connection.execute(
        select(ChannelControl.__table__).order_by(col(ChannelControl.changed_at).desc())  # type: ignore[attr-defined]
    )
    moment = time.time() if now is None else now
    return [
        effective(_row(dict(row)), channel=row["channel"], now=moment)
        for row in result.mappings().all()
    ]


async def set_mode(
    engine: AsyncEngine,
    *,
    channel: str,
    mode: Mode,
    user: str,
    quiet_until: float | None = None,
    now: float | None = None,
) -> None:
    """Store the channel's new mode (`quiet_until` only for QUIET); its forget record stays."""
    moment = time.time() if now is None else now
    values = {
        "channel": channel,
        "mode": mode.value,
        "quiet_until": quiet_until if mode is Mode.QUIET else None,
        "changed_by": user,
        "changed_at": moment,
    }
    statement = upsert(engine.dialect.name, ChannelControl).values(
        **values, forgotten_at=None, forgotten_by=""
    )
    statement = statement.on_conflict_do_update(
        index_elements=["channel"], set_={k: v for k, v in values.items() if k != "channel"}
    )
    async with engine.begin() as connection:
        await connection.execute(statement)
