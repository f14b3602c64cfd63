"""Storing messages that arrive outside the Events API (history fetches, our own posts)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial

from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.dialects import upsert
from app.db.ingest import message_row
from app.db.isolation import storable
from app.db.models import Message
from app.db.removal import remove_messages
from app.domain import Route, RouteKind
from app.slack.events import IncomingMessage, MessageDeleted


async def store_messages(
    connection: AsyncConnection, messages: Sequence[IncomingMessage | MessageDeleted]
) -> None:
    """Insert the messages not yet stored (recorded only, they trigger nothing) and refresh
    the text of those that are, unless they were deleted; delete those Slack shows as
    deleted (a thread parent's tombstone)."""
    live = [m for m in messages if isinstance(m, IncomingMessage)]
    gone: dict[str, list[str]] = {}
    for m in messages:
        if isinstance(m, MessageDeleted):
            gone.setdefault(m.channel, []).append(m.ts)
    if live:
        rows = [
            # Off the ack path, every value is made storable at once: one NUL in a thread's
            # history must not keep the rest of it out.
            {key: storable(v) if isinstance(v, str) else v for key, v in row.items()}
            for row in {
                m.ts: message_row(m, Route(RouteKind.RECORD, m.thread_ts)) for m in live
            }.values()
        ]
        statement = upsert(connection.dialect.name, Message)
        statement = statement.on_conflict_do_update(
            index_elements=["channel", "ts"],
            set_={"text": statement.excluded.text},
            where=(Message.deleted == False) & (Message.text != statement.excluded.text),  # type: ignore[arg-type]  # noqa: E712
        )
        await connection.execute(statement, rows)
    now = time.time()
    for channel, stamps in gone.items():
        await connection.run_sync(partial(remove_messages, channel=channel, stamps=stamps, now=now))
