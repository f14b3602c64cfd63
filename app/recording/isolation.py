"""When a group commit fails: was it the database, or one event's values?

A group commit writes the events of many requests in one transaction, so one value the
database refuses (a NUL in text on PostgreSQL, a lone surrogate anywhere) would fail every
event written with it. The recorder then writes the deliveries one by one to find the
culprit, cleans its values where that keeps their meaning, and otherwise rejects it alone.
Only a failure of the database itself (down, locked, full, out of connections) fails them all,
and only that answers 500.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError, StatementError

from app.recording.deliveries import Delivery, NewMessage

T = TypeVar("T")

# PostgreSQL's SQLSTATE classes of errors caused by the values written: data exceptions
# (a NUL, bad encoding, a value too long) and integrity constraint violations.
_DATA_CLASSES = ("22", "23")
# ... and those of the server or the connection: connection exceptions, resources, operator
# intervention, system errors, transaction rollbacks (serialisation, deadlock).
_OPERATIONAL_CLASSES = ("08", "53", "57", "58", "40")
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _sqlstate(error: BaseException) -> str:
    original = getattr(error, "orig", None)
    state = getattr(original, "sqlstate", None) or getattr(original, "pgcode", None)
    return state if isinstance(state, str) else ""


def is_operational(error: BaseException) -> bool:
    """The database (not the values) failed: writing the deliveries one by one is pointless."""
    if isinstance(error, OperationalError | OSError):  # TimeoutError and refused connections
        return True
    if isinstance(error, DBAPIError):
        return error.connection_invalidated or _sqlstate(error)[:2] in _OPERATIONAL_CLASSES
    return False


def is_data_error(error: BaseException) -> bool:
    """The values written made it fail: the driver refused one (a lone surrogate, a value of
    the wrong type) or the database did (a NUL, a value too long)."""
    if isinstance(error, DataError | IntegrityError):
        return True
    if isinstance(error, DBAPIError):
        return _sqlstate(error)[:2] in _DATA_CLASSES
    if isinstance(error, StatementError):  # SQLAlchemy's own processing of a value
        return error.orig is not None and is_data_error(error.orig)
    return isinstance(error, ValueError | TypeError | ArithmeticError)


def summary(error: BaseException) -> str:
    """The error for a log line: its type and first line, without the statement and the values
    SQLAlchemy adds (people's messages)."""
    cause = getattr(error, "orig", None) or error
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0][:200] if lines else ''}"


def storable(text: str) -> str:
    """`text` without NULs (PostgreSQL refuses them in text) and with lone surrogates (which
    no UTF-8 encoder takes) replaced by U+FFFD."""
    return _UNSTORABLE.sub(lambda m: "" if m.group() == "\x00" else "\ufffd", text)


def _cleaned(record: T) -> T:
    """A frozen dataclass with every text field storable."""
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(record):  # type: ignore[arg-type]
        value = getattr(record, field.name)
        if isinstance(value, str) and _UNSTORABLE.search(value):
            changes[field.name] = storable(value)
    return dataclasses.replace(record, **changes) if changes else record  # type: ignore[type-var]


def cleaned(delivery: Delivery) -> Delivery:
    """The delivery with its values made storable where that keeps their meaning: the same
    delivery when there was nothing to clean."""
    change = delivery.change
    if isinstance(change, NewMessage):
        change = NewMessage(_cleaned(change.message), _cleaned(change.route))
    elif change is not None:
        change = _cleaned(change)
    event_id = storable(delivery.event_id) if delivery.event_id else delivery.event_id
    if change == delivery.change and event_id == delivery.event_id:
        return delivery
    return Delivery(event_id, change, delivery.installed)
