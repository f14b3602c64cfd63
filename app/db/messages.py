"""Storing messages that arrive outside the Events API (history fetches, our own posts)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.dialects import upsert
from app.db.models import Message
from app.services.routing import Route, RouteKind
from app.slack.events import IncomingMessage, MessageDeleted


async def store_messages(
    connection: AsyncConnection, messages: Sequence[IncomingMessage | MessageDeleted]
) -> None:
    """Insert the messages not yet stored (recorded only, they trigger nothing) and refresh
    the text of those that are, unless they were deleted; mark deleted those Slack shows as
    deleted (a thread parent's tombstone)."""
    from app.db.recorder import message_row

    live = [m for m in messages if isinstance(m, IncomingMessage)]
    gone: dict[str, list[str]] = {}
    for m in messages:
        if isinstance(m, MessageDeleted):
            gone.setdefault(m.channel, []).append(m.ts)
    if live:
        rows = list(
            {m.ts: message_row(m, Route(RouteKind.RECORD, m.thread_ts)) for m in live}.values()
        )
        statement = upsert(connection.dialect.name, Message)
        statement = statement.on_conflict_do_update(
            index_elements=["channel", "ts"],
            set_={"text": statement.excluded.text},
            where=(Message.deleted == False) & (Message.text != statement.excluded.text),  # type: ignore[arg-type]  # noqa: E712
        )
        await connection.execute(statement, rows)
    for channel, stamps in gone.items():
        await connection.execute(
            update(Message)
            .where(Message.channel == channel, Message.ts.in_(stamps))  # type: ignore[arg-type,attr-defined]
            .where(Message.deleted == False)  # type: ignore[arg-type]  # noqa: E712
            # edited_at marks the removal, so memories built from the message are rebuilt.
            .values(deleted=True, text="", edited_at=time.time())
        )
