"""Storing messages that arrive outside the Events API (history fetches, our own posts),
through the gate (app.gate.rules), with its facts read in the transaction that stores."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.engine import Connection

from app.db.dialects import upsert
from app.db.models import Message
from app.db.removal import remove_messages
from app.domain import Route, RouteKind
from app.gate.rules import gate_for
from app.recording.deliveries import message_row
from app.recording.isolation import storable
from app.slack.events import IncomingMessage, MessageDeleted


def store_messages(
    connection: Connection,
    messages: Sequence[IncomingMessage | MessageDeleted],
    *,
    keep_after: float | None,
    now: float,
) -> list[IncomingMessage]:
    """Insert the messages not yet stored that the gate lets in (recorded only, they trigger
    nothing) and refresh the text of those that are, unless they were deleted; delete those
    Slack shows as deleted (a thread parent's tombstone). The messages it let in."""
    live = [m for m in messages if isinstance(m, IncomingMessage)]
    gate = gate_for(connection, live, keep_after=keep_after)
    kept = [m for m in live if gate.storable(m.channel, m.ts, m.created_at)]
    gone: dict[str, list[str]] = {}
    for m in messages:
        if isinstance(m, MessageDeleted):
            gone.setdefault(m.channel, []).append(m.ts)
    if kept:
        rows = [
            # Off the ack path, every value is made storable at once: one NUL in a thread's
            # history must not keep the rest of it out.
            {key: storable(v) if isinstance(v, str) else v for key, v in row.items()}
            for row in {
                m.ts: message_row(m, Route(RouteKind.RECORD, m.thread_ts)) for m in kept
            }.values()
        ]
        statement = upsert(connection.dialect.name, Message)
        statement = statement.on_conflict_do_update(
            index_elements=["channel", "ts"],
            set_={"text": statement.excluded.text},
            where=(Message.deleted == False) & (Message.text != statement.excluded.text),  # type: ignore[arg-type]  # noqa: E712
        )
        connection.execute(statement, rows)
    for channel, stamps in gone.items():
        remove_messages(connection, channel, stamps, now=now)
    return kept
