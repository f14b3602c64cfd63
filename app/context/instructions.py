"""A channel's standing instructions (docs/how-tomo-works.md#standing-instructions): what people
asked tomo to keep to in that channel with `/tomo instructions TEXT` — tone, language, topics,
when to join. Stored in `channel_control`; every judgment and reply prompt of the channel shows
them in its stable part (app.context.builder, templates/_context.j2).

They change how tomo talks, never what it may show: who may see what, the limits and the tools'
rules are decided in code (app.gate, app.conversation.voice.own_voice), which never reads them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import ChannelControl

MAX_CHARS = 1000

_TABLE = ChannelControl.__table__  # type: ignore[attr-defined]
_OF_CHANNEL = select(_TABLE.c.instructions).where(_TABLE.c.channel == bindparam("channel"))


class TooLong(ValueError):
    """More than MAX_CHARS characters: nothing is stored."""


@dataclass(frozen=True)
class Instructions:
    channel: str
    text: str
    set_by: str
    set_at: float


def clean(text: str) -> str:
    """The instructions as they are kept: outer space gone; TooLong past MAX_CHARS."""
    text = text.strip()
    if len(text) > MAX_CHARS:
        raise TooLong(len(text))
    return text


async def set_instructions(
    engine: AsyncEngine, *, channel: str, text: str | None, user: str, now: float | None = None
) -> None:
    """Store the channel's instructions (None or "": none); its mode and forget record stay."""
    values = {
        "instructions": text or None,
        "instructions_by": user,
        "instructions_at": time.time() if now is None else now,
    }
    statement = upsert(engine.dialect.name, ChannelControl).values(channel=channel, **values)
    statement = statement.on_conflict_do_update(index_elements=["channel"], set_=values)
    async with engine.begin() as connection:
        await connection.execute(statement)


def _of(row: object) -> Instructions | None:
    text = getattr(row, "instructions", None)
    if not text:
        return None
    return Instructions(
        channel=str(getattr(row, "channel", "")),
        text=str(text),
        set_by=str(getattr(row, "instructions_by", "") or ""),
        set_at=float(getattr(row, "instructions_at", 0.0) or 0.0),
    )


async def read_instructions(connection: AsyncConnection, channel: str) -> Instructions | None:
    found = await connection.execute(select(_TABLE).where(col(ChannelControl.channel) == channel))
    return _of(found.first())


async def all_instructions(connection: AsyncConnection) -> dict[str, Instructions]:
    """Every channel's instructions, by channel (the admin page)."""
    found = await connection.execute(
        select(_TABLE).where(col(ChannelControl.instructions).is_not(None))
    )
    return {item.channel: item for row in found if (item := _of(row)) is not None}


def instructions_text(connection: Connection, channel: str) -> str | None:
    """What a prompt of `channel` shows (the context builder's read, on its connection)."""
    text = connection.execute(_OF_CHANNEL, {"channel": channel}).scalar_one_or_none()
    return str(text) if text else None
