"""What one group commit writes: the batch's event ids, its new messages, its edits and deletes.

`write_batch` is synchronous SQLAlchemy so it runs unchanged on the recorder's SQLite writer
thread and, through `run_sync`, on an async connection (PostgreSQL). On SQLite its two bulk
inserts are SQL text with the rows' values as one flat tuple: SQLAlchemy Core's per-row
parameter processing cost as much CPU as SQLite's own work, on the thread that shares the GIL
with every acknowledgement.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from dataclasses import replace
from itertools import chain
from typing import Any

from sqlalchemy import delete, update
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.db import erasure
from app.db.conversation_facts import CONVERSIONS, note_conversions, note_fact
from app.db.dialects import upsert
from app.db.erasure import note_erasure
from app.db.models import Message, SeenEvent
from app.db.removal import remove_messages, removed_among
from app.domain import RouteKind
from app.gate.rules import Gate
from app.recording.deliveries import (
    APPLIED,
    DEFERRED,
    DUPLICATE,
    NOT_APPLIED,
    Change,
    Delivery,
    NewMessage,
    Outcome,
    Reroute,
    message_row,
    reply_reason,
)
from app.slack.events import MessageDeleted, MessageEdited

MESSAGE_COLUMNS = tuple(Message.__table__.columns.keys())  # type: ignore[attr-defined]
_message_values = operator.itemgetter(*MESSAGE_COLUMNS)


@functools.lru_cache(maxsize=64)
def _sqlite_insert(table: str, columns: tuple[str, ...], returning: str, rows: int) -> str:
    """INSERT of `rows` rows, ignoring conflicts, returning the key of those stored."""
    values = ",".join(["(" + ",".join("?" * len(columns)) + ")"] * rows)
    return (
        f"INSERT INTO {table} ({','.join(columns)}) VALUES {values} "
        f"ON CONFLICT DO NOTHING RETURNING {returning}"
    )


def _store_event_ids(connection: Connection, event_ids: list[str], now: float) -> set[str]:
    """The event ids not seen before, now stored."""
    if connection.dialect.name == "sqlite":
        sql = _sqlite_insert("seen_event", ("event_id", "received_at"), "event_id", len(event_ids))
        parameters = tuple(chain.from_iterable((event_id, now) for event_id in event_ids))
        return {row[0] for row in connection.exec_driver_sql(sql, parameters)}
    seen = (
        upsert("postgresql", SeenEvent).on_conflict_do_nothing().returning(col(SeenEvent.event_id))
    )
    rows = [{"event_id": event_id, "received_at": now} for event_id in event_ids]
    return set(connection.execute(seen, rows).scalars())


def _store_messages(connection: Connection, messages: list[NewMessage]) -> set[tuple[str, str]]:
    """The (channel, ts) of the messages not stored before, now stored."""
    rows = [message_row(n.message, n.route) for n in messages]
    if connection.dialect.name == "sqlite":
        sql = _sqlite_insert("message", MESSAGE_COLUMNS, "channel, ts", len(rows))
        parameters = tuple(chain.from_iterable(map(_message_values, rows)))
        return {(row[0], row[1]) for row in connection.exec_driver_sql(sql, parameters)}
    stored = (
        upsert("postgresql", Message)
        .on_conflict_do_nothing()
        .returning(col(Message.channel), col(Message.ts))
    )
    return {(row[0], row[1]) for row in connection.execute(stored, rows)}


def write_batch(
    connection: Connection,
    batch: Sequence[Delivery],
    *,
    now: float,
    keep_after: float | None = None,
    reroute: Reroute | None = None,
) -> list[Outcome]:
    """Apply the deliveries in order, in the caller's transaction: one INSERT .. ON CONFLICT DO
    NOTHING RETURNING for the event ids, one for the new messages, an UPDATE per edit, a
    DELETE per deletion (app.db.removal), a row per channel or workspace taken away.

    What the gate refuses (app.gate.rules: older than `keep_after`, the retention; of a channel
    or workspace tomo was removed from; written before its channel's forget; deleted already,
    its `message_deleted` delivered first) is not stored: its event is acknowledged all the
    same.
    `reroute` may give the new messages other routes (one read for the batch) before they are
    stored; their outcomes say so."""
    event_ids = list(dict.fromkeys(d.event_id for d in batch if d.event_id))
    fresh = _store_event_ids(connection, event_ids, now) if event_ids else set()
    live: list[bool] = []
    for delivery in batch:
        live.append(delivery.event_id is None or delivery.event_id in fresh)
        fresh.discard(delivery.event_id or "")  # a second copy in the same batch is a duplicate

    # Removals first, so a message of a channel gone in the same batch is not stored; what
    # Slack says of a conversation (shared, a member joining or leaving) with them.
    noted = {
        id(d.change)
        for d, ok in zip(batch, live, strict=True)
        if ok
        and (
            note_erasure(connection, d.change, now=now) or note_fact(connection, d.change, now=now)
        )
    }
    lifted = _lift(connection, batch, live)
    # Which new messages Slack deleted already (its message_deleted came first): one read by
    # the removal table's key, none for a batch without a new message.
    news = [
        d.change.message
        for d, ok in zip(batch, live, strict=True)
        if ok and isinstance(d.change, NewMessage)
    ]
    removed = removed_among(connection, [(m.channel, m.ts) for m in news])
    gate = Gate.of(lifted.left, keep_after=keep_after, removed=removed)

    # One row per message; when both copies of a mention share a batch, the app_mention wins.
    new_messages: dict[tuple[str, str], NewMessage] = {}
    refused: set[int] = set()  # what the gate refuses (app.gate.rules)
    deferred = _defer(connection, batch, live, lifted)
    for delivery, ok in zip(batch, live, strict=True):
        if not ok or not isinstance(delivery.change, NewMessage) or id(delivery) in deferred:
            continue
        message = delivery.change.message
        if message.subtype in CONVERSIONS:  # a channel made private or public
            note_conversions(connection, [message], now=now)
        if not gate.storable(message.channel, message.ts, message.created_at):
            refused.add(id(delivery.change))
            continue
        key = (message.channel, message.ts)
        if key not in new_messages or message.app_mention:
            new_messages[key] = delivery.change
    routes = reroute(connection, list(new_messages.values()), now) if reroute else {}
    stored = [
        NewMessage(change.message, routes[key]) if key in routes else change
        for key, change in new_messages.items()
    ]
    inserted = _store_messages(connection, stored) if stored else set()

    def outcome(delivery: Delivery) -> Outcome:
        if id(delivery) in deferred:
            return DEFERRED
        result = settled(delivery.change)
        if lifted.lifted and delivery.installed is not None:
            return replace(result, lifted=True)
        return result

    def settled(change: Change) -> Outcome:
        if id(change) in noted:
            return APPLIED
        if id(change) in refused:
            return NOT_APPLIED
        if not _apply(connection, change, inserted, new_messages, now):
            return NOT_APPLIED
        if isinstance(change, NewMessage):
            route = routes.get((change.message.channel, change.message.ts))
            if route is not None:
                return Outcome(duplicate=False, applied=True, route=route)
        return APPLIED

    return [outcome(d) if ok else DUPLICATE for d, ok in zip(batch, live, strict=True)]


def _lift(connection: Connection, batch: Sequence[Delivery], live: list[bool]) -> erasure.Lifted:
    """What was taken away (and the forget times), once events delivered after an uninstall
    lifted its mark. Read only for a batch with a new message (or a proof of install): one
    read of two tables that are usually empty or nearly."""
    proofs = [d.installed for d, ok in zip(batch, live, strict=True) if ok and d.installed]
    if not proofs and not any(isinstance(d.change, NewMessage) for d in batch):
        return erasure.Lifted([])
    found = erasure.marks(connection)
    return erasure.lift(connection, found, proofs) if found and proofs else erasure.Lifted(found)


def _defer(
    connection: Connection, batch: Sequence[Delivery], live: list[bool], lifted: erasure.Lifted
) -> set[int]:
    """The new messages that prove a reinstall while the uninstall's deletion still runs:
    not stored now (it would delete them), and their event ids forgotten, so that Slack's
    next delivery of them is stored once the deletion is done."""
    if not lifted.under_way:
        return set()
    waiting = [
        d
        for d, ok in zip(batch, live, strict=True)
        if ok and isinstance(d.change, NewMessage) and lifted.waits(d.installed)
    ]
    ids = [d.event_id for d in waiting if d.event_id]
    if ids:
        connection.execute(delete(SeenEvent).where(col(SeenEvent.event_id).in_(ids)))
    return {id(d) for d in waiting}


def _apply(
    connection: Connection,
    change: Change,
    inserted: set[tuple[str, str]],
    stored: dict[tuple[str, str], NewMessage],
    now: float,
) -> bool:
    if isinstance(change, NewMessage):
        key = (change.message.channel, change.message.ts)
        if key in inserted:
            return stored[key] is change  # only the copy that was stored counts
        if change.message.app_mention and change.route.kind is RouteKind.REPLY:
            # The `message` copy of a mention came first and was routed before the bot
            # knew its own id: the app_mention makes it a mention, once.
            result = connection.execute(
                update(Message)
                .where(Message.channel == key[0], Message.ts == key[1])  # type: ignore[arg-type]
                .where(Message.route != RouteKind.REPLY.value)  # type: ignore[arg-type]
                .values(
                    route=RouteKind.REPLY.value,
                    reply_reason=reply_reason(change.route),
                    conversation_ts=change.route.conversation_ts,
                )
            )
            return bool(result.rowcount)
        return False
    if isinstance(change, MessageEdited):
        # An unfurl or attachment update refreshes the text only: not "(edited)", and no
        # news for the memories built from the message.
        values: dict[str, Any] = {"text": change.text}
        if change.edited:
            values["edited_at"] = change.edited_at
        result = connection.execute(
            update(Message)
            .where(Message.channel == change.channel, Message.ts == change.ts)  # type: ignore[arg-type]
            .where(Message.deleted == False)  # type: ignore[arg-type]  # noqa: E712
            .values(**values)
        )
        return bool(result.rowcount)
    if isinstance(change, MessageDeleted):
        return bool(remove_messages(connection, change.channel, [change.ts], now=now))
    return change is None
