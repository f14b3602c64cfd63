"""What every search of the stored messages shares (app.db.search.service): the columns it returns,
which messages it may return (`Where`), and the two reads that need no index: the newest
messages, and short words looked for among them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Row, Select, Table, false, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.models import Message
from app.db.search.terms import Terms, like_pattern
from app.slack.kinds import MessageKind

# Short words alone (no longer word to narrow by) are looked for in this many of the newest
# stored messages, where the index cannot find them.
SHORT_SCAN_ROWS = 20_000
# A search in one channel first reads that channel's newest messages, this many.
CHANNEL_ROWS = 2000

# How well a text (a column) matches the query, higher is better: each database has its own.
Rank = Callable[[Any], ColumnElement[float]]

MESSAGES: Table = Message.__table__  # type: ignore[attr-defined]
M = MESSAGES.c
COLUMNS = (
    *(M.channel, M.ts, M.thread_ts, M.user_id, M.bot_id, M.text, M.subtype, M.kind),
    *(M.created_at, M.edited_at, M.files),
)


class Readable(Protocol):
    """Who may see what (app.gate.scope.Scope), as a condition on a message's conversation id
    and time columns."""

    def where(self, channel_column: Any, created_column: Any) -> ColumnElement[bool]: ...


@dataclass(frozen=True)
class Where:
    """Which messages a search may return: the scope's, in `channel` when set, since `since`;
    only conversational messages, never deleted ones."""

    scope: Readable
    since: float | None = None
    channel: str | None = None

    def after(self, bound: float | None) -> Where:
        """The same, and written at `bound` or later."""
        if bound is None or (self.since is not None and self.since >= bound):
            return self
        return replace(self, since=bound)

    def conditions(self, *, by_time: bool = False) -> list[ColumnElement[bool]]:
        """`by_time`: the rows are to be read newest first through ix_message_created, so the
        scope's condition is put on an expression of the channel that no index answers (else
        SQLite reads every row of the channels in scope, then sorts them)."""
        channel = M.channel + "" if by_time else M.channel
        found = [
            self.scope.where(channel, M.created_at),
            M.kind == MessageKind.CONVERSATIONAL.value,
            M.deleted == false(),
        ]
        if self.since is not None:
            found.append(M.created_at >= self.since)
        if self.channel is not None:
            found.append(M.channel == self.channel)
        return found


def contains(words: tuple[str, ...], text: Any = M.text) -> list[ColumnElement[bool]]:
    """Each word occurs in `text`, in any case."""
    return [text.ilike(like_pattern(word), escape="\\") for word in words]


def newest(where: Where, limit: int, *, by_time: bool = True) -> Select[Any]:
    """The newest messages: in a channel, by its primary key (channel, ts) read backwards;
    else by ix_message_created read backwards (`by_time`: told so; SQLite needs it, where
    PostgreSQL chooses it itself for a `Where` bounded by `recent`). Either stops at `limit`
    rows."""
    if where.channel is not None:
        return select(*COLUMNS).where(*where.conditions()).order_by(M.ts.desc()).limit(limit)
    conditions = where.conditions(by_time=by_time)
    return select(*COLUMNS).where(*conditions).order_by(M.created_at.desc()).limit(limit)


async def recent(connection: AsyncConnection, rows: int) -> float | None:
    """The time of the `rows`-th newest stored message (read from ix_message_created alone),
    or None when there are fewer: `Where.after` it, a search reads at most the newest `rows`
    messages, through that index, whichever conversations they are in."""
    bound = await connection.scalar(
        select(M.created_at).order_by(M.created_at.desc()).offset(rows - 1).limit(1)
    )
    return None if bound is None else float(bound)


def scanned(terms: Terms, where: Where, limit: int) -> Select[Any]:
    """SQLite: messages of `where` with every word, newest first, read newest first through
    ix_message_created (for a `where` bounded by `recent`)."""
    words = contains((*terms.long, *terms.short))
    return (
        select(*COLUMNS)
        .where(*where.conditions(by_time=True), *words)
        .order_by(M.created_at.desc())
        .limit(limit)
    )


async def in_channel(
    connection: AsyncConnection, terms: Terms, where: Where, limit: int, rank: Rank
) -> tuple[Sequence[Row[Any]], bool]:
    """A search in one channel, in its newest CHANNEL_ROWS messages (its primary key read
    backwards): the best `limit` there, and whether those were all it has in the window (the
    answer is then complete). A word found everywhere but rare in this channel would
    otherwise have every row the index holds for it read to find this channel's few."""
    assert where.channel is not None
    window = select(M.ts).where(*where.conditions()).order_by(M.ts.desc()).limit(CHANNEL_ROWS + 1)
    stored = await connection.scalar(select(func.count()).select_from(window.subquery()))
    recent = newest(where, CHANNEL_ROWS, by_time=False).subquery()
    found = await connection.execute(
        select(*recent.c)
        .where(*contains((*terms.long, *terms.short), recent.c.text))
        .order_by(rank(recent.c.text).desc(), recent.c.created_at.desc(), recent.c.ts.desc())
        .limit(limit)
    )
    return found.all(), int(stored or 0) <= CHANNEL_ROWS
