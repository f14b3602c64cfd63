"""Storing messages that arrive outside the Events API (history fetches, our own posts)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.dialects import upsert
from app.db.isolation import storable
from app.db.models import Message
from app.services.routing import Route, RouteKind
from app.slack.events import IncomingMessage


async def store_messages(connection: AsyncConnection, messages: Sequence[IncomingMessage]) -> None:
    """Insert the messages not yet stored (recorded only, they trigger nothing) and refresh
    the text of those that are, unless they were deleted."""
    if not messages:
        return
    from app.db.recorder import message_row

    rows = [
        # Off the ack path, every value is made storable at once: one NUL in a thread's
        # history must not keep the rest of it out.
        {key: storable(value) if isinstance(value, str) else value for key, value in row.items()}
        for row in {
            m.ts: message_row(m, Route(RouteKind.RECORD, m.thread_ts)) for m in messages
        }.values()
    ]
    statement = upsert(connection.dialect.name, Message)
    statement = statement.on_conflict_do_update(
        index_elements=["channel", "ts"],
        set_={"text": statement.excluded.text},
        where=(Message.deleted == False) & (Message.text != statement.excluded.text),  # type: ignore[arg-type]  # noqa: E712
    )
    await connection.execute(statement, rows)
