"""The gate: whether a message may be stored, and whether it may be shown.

Every path that stores a message asks `Gate.storable` in the transaction that stores it: the
events (app.recording.ingest, on the acknowledgement's path), and everything fetched from Slack or
posted by tomo (app.recording.messages: a thread read by `read_thread`, a reply's thread history,
the history of a channel tomo is invited into, tomo's own posts). Every path that shows one
asks `Gate.shown` (a message read live) or puts `forgotten_condition` / `after_forget` in its
query (a search, a prompt).

- A message older than the retention (`keep_after`) is never stored; read live when a person
  asks for it, it may be shown.
- Nothing of a channel tomo was removed from or that was deleted, nor of a workspace that
  uninstalled tomo, is stored.
- A message written before its channel's `/tomo forget` is never stored again, shown or put
  in a prompt, even when Slack still has it (a thread begun before the forget shows what came
  after it).
- A message Slack deleted (its `removal` row) is not stored again by a fetch that raced the
  deletion.

The facts come from the database (app.db.erasure.marks: the removals and the forget times,
one read of two small tables), so every process decides alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from sqlalchemy import ColumnElement, and_, not_, or_, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col

from app.db import erasure
from app.db.erasure import CHANNEL, FORGET, TEAM
from app.db.models import ChannelControl
from app.db.removal import removed_among
from app.slack.events import IncomingMessage

_NONE: frozenset[Any] = frozenset()


class Marked(Protocol):
    @property
    def scope(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def requested_at(self) -> float: ...


@dataclass(frozen=True)
class Gate:
    keep_after: float | None = None  # messages written before this are not stored
    closed: frozenset[str] = _NONE  # channels tomo was removed from, or deleted
    all_closed: bool = False  # the workspace uninstalled tomo
    forgotten: Mapping[str, float] = field(default_factory=dict)  # channel -> forgotten at
    removed: frozenset[tuple[str, str]] = _NONE  # (channel, ts) Slack deleted

    @classmethod
    def of(
        cls,
        marks: Iterable[Marked],
        *,
        keep_after: float | None,
        removed: frozenset[tuple[str, str]] = _NONE,
    ) -> Gate:
        closed: set[str] = set()
        forgotten: dict[str, float] = {}
        all_closed = False
        for mark in marks:
            if mark.scope == TEAM:
                all_closed = True
            elif mark.scope == CHANNEL:
                closed.add(mark.target)
            elif mark.scope == FORGET:
                forgotten[mark.target] = float(mark.requested_at)
        if not closed and not forgotten and not all_closed and not removed:
            return cls(keep_after=keep_after)
        return cls(keep_after, frozenset(closed), all_closed, forgotten, removed)

    def storable(self, channel: str, ts: str, created_at: float) -> bool:
        """Whether a message may be stored (and so, from then on, found and put in prompts)."""
        if self.keep_after is not None and created_at < self.keep_after:
            return False
        if self.all_closed or channel in self.closed:
            return False
        return self.shown(channel, ts, created_at)

    def shown(self, channel: str, ts: str, created_at: float) -> bool:
        """Whether a message may be shown at all (a tool's result, a prompt): not one written
        before its channel's forget, nor one Slack deleted."""
        forgotten = self.forgotten.get(channel)
        if forgotten is not None and created_at < forgotten:
            return False
        return (channel, ts) not in self.removed


def gate_for(
    connection: Connection, messages: Sequence[IncomingMessage], *, keep_after: float | None
) -> Gate:
    """The gate for these messages, in the caller's transaction: the removals and forget
    times, and which of the messages Slack deleted already (a fetch that raced the
    deletion)."""
    removed = removed_among(connection, [(m.channel, m.ts) for m in messages])
    return Gate.of(erasure.marks(connection), keep_after=keep_after, removed=removed)


async def to_show(connection: AsyncConnection, messages: Sequence[IncomingMessage] = ()) -> Gate:
    """The gate for what a tool shows: `messages` read live (the retention is the tool's
    own window)."""
    return await connection.run_sync(partial(gate_for, messages=messages, keep_after=None))


def forgotten_condition(
    forgotten: Mapping[str, float], channel: Any, created_at: Any
) -> ColumnElement[bool] | None:
    """SQL on a message's channel and time columns: not written before its channel's forget
    (None when no channel was forgotten: the usual case, and no condition at all)."""
    if not forgotten:
        return None
    before = [and_(channel == c, created_at < at) for c, at in sorted(forgotten.items())]
    return and_(*(not_(b) for b in before))


def after_forget(channel: Any, created_at: Any) -> ColumnElement[bool]:
    """SQL for one channel's messages (`channel` a bound value or column): written at or after
    its forget, read from channel_control by its key in the same query."""
    forgotten_at = (
        select(col(ChannelControl.forgotten_at))
        .where(col(ChannelControl.channel) == channel)
        .scalar_subquery()
    )
    # Not coalesce(forgotten_at, 0): a time before 1970 (a poison row's) is no forget's.
    return or_(forgotten_at.is_(None), created_at >= forgotten_at)
