"""Searching the stored messages through the index migration 0015 builds, within a scope.

- A word of three characters or more is looked up in the index: SQLite's FTS5 trigram table
  (`message_search`), PostgreSQL's pg_trgm GIN index (ILIKE). Several words must all occur.
- A word of one or two characters (会議, 予算, "ok") has no trigram of its own. Beside a
  longer word it is checked on the rows the longer one found. Alone, on SQLite, it is looked
  up through the index's vocabulary: every text is indexed with two spaces after it, so each
  occurrence of the word begins some trigram, and the trigrams that begin with it are read
  from `message_search_terms`; on PostgreSQL (and on SQLite when a word begins too many
  trigrams), the newest SHORT_SCAN_ROWS messages the reader may see in the window are read.
- Best matches first (SQLite's bm25; PostgreSQL's word_similarity), ties newest first, among
  the newest CANDIDATES matches the reader may see: a word found in half a million messages
  costs no more than one found in a thousand.
- Every query carries the scope's condition (app.tools.scope), and only conversational
  messages that are not deleted, written since `since`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    Table,
    false,
    func,
    literal_column,
    select,
    table,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.models import Message
from app.db.search_terms import Terms, any_of, like_pattern, phrase, prefix_range
from app.slack.kinds import MessageKind

CANDIDATES = 1000
SHORT_SCAN_ROWS = 20_000
MAX_TRIGRAMS = 500  # trigrams one short word may stand for on SQLite (else the newest rows)

MESSAGES: Table = Message.__table__  # type: ignore[attr-defined]
_M = MESSAGES.c
COLUMNS = (
    *(_M.channel, _M.ts, _M.thread_ts, _M.user_id, _M.bot_id, _M.text, _M.subtype, _M.kind),
    *(_M.created_at, _M.edited_at, _M.files),
)
_INDEX = table("message_search")
_INDEX_ROWID: ColumnElement[Any] = literal_column("message_search.rowid")
_MESSAGE_ROWID: ColumnElement[Any] = literal_column("message.rowid")
_TERM: ColumnElement[str] = literal_column("term")


class Readable(Protocol):
    """Who may see what (app.tools.scope.Scope), as a condition on a conversation id column."""

    def where(self, channel_column: Any) -> ColumnElement[bool]: ...


@dataclass(frozen=True)
class Where:
    """Which messages a search may return: the scope's, in `channel` when set, since `since`."""

    scope: Readable
    since: float | None = None
    channel: str | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found = [
            self.scope.where(_M.channel),
            _M.kind == MessageKind.CONVERSATIONAL.value,
            _M.deleted == false(),
        ]
        if self.since is not None:
            found.append(_M.created_at >= self.since)
        if self.channel is not None:
            found.append(_M.channel == self.channel)
        return found


async def search(
    connection: AsyncConnection, terms: Terms, where: Where, *, limit: int
) -> Sequence[Row[Any]]:
    """The messages matching every word (the newest, for no words), best first."""
    if terms.empty:
        return (await connection.execute(_newest(where, limit))).all()
    if connection.dialect.name == "sqlite":
        statement = await _sqlite(connection, terms, where, limit)
    else:
        statement = _postgresql(terms, where, limit)
    return (await connection.execute(statement)).all()


def _newest(where: Where, limit: int) -> Select[Any]:
    return (
        select(*COLUMNS)
        .where(*where.conditions())
        .order_by(_M.created_at.desc(), _M.ts.desc())
        .limit(limit)
    )


def _short_words(terms: Terms) -> list[ColumnElement[bool]]:
    return [_M.text.ilike(like_pattern(word), escape="\\") for word in terms.short]


def _scanned(terms: Terms, where: Where, limit: int) -> Select[Any]:
    """Short words alone: looked for in the newest SHORT_SCAN_ROWS messages the reader may see."""
    newest = _newest(where, SHORT_SCAN_ROWS).subquery()
    text = newest.c.text
    return (
        select(*newest.c)
        .where(*(text.ilike(like_pattern(word), escape="\\") for word in terms.short))
        .order_by(newest.c.created_at.desc(), newest.c.ts.desc())
        .limit(limit)
    )


async def _sqlite(
    connection: AsyncConnection, terms: Terms, where: Where, limit: int
) -> Select[Any]:
    queries = [phrase(word) for word in terms.long]
    checks = _short_words(terms)
    if not queries:
        for word in terms.short:
            low, high = prefix_range(word)
            trigrams = await connection.execute(
                select(_TERM)
                .select_from(table("message_search_terms"))
                .where(_TERM >= low, _TERM < high)
                .limit(MAX_TRIGRAMS + 1)
            )
            found = [str(t) for t in trigrams.scalars()]
            if not found:
                return _newest(where, 0)  # in no message at all
            if len(found) > MAX_TRIGRAMS:
                return _scanned(terms, where, limit)
            queries.append(any_of(found))
        checks = []  # every trigram found begins with its word
    matched = literal_column("message_search").op("MATCH")(" AND ".join(queries))
    candidates = (
        select(_INDEX_ROWID.label("id"), func.bm25(literal_column("message_search")).label("score"))
        .select_from(_INDEX.join(MESSAGES, _MESSAGE_ROWID == _INDEX_ROWID))
        .where(matched, *where.conditions(), *checks)
        .order_by(_INDEX_ROWID.desc())
        .limit(CANDIDATES)
        .subquery()
    )
    return (
        select(*COLUMNS)
        .select_from(candidates.join(MESSAGES, _MESSAGE_ROWID == candidates.c.id))
        .order_by(candidates.c.score, _M.created_at.desc(), _M.ts.desc())
        .limit(limit)
    )


def _postgresql(terms: Terms, where: Where, limit: int) -> Select[Any]:
    if not terms.long:
        return _scanned(terms, where, limit)
    contains = [_M.text.ilike(like_pattern(word), escape="\\") for word in terms.long]
    candidates = (
        select(*COLUMNS, func.word_similarity(terms.text, _M.text).label("score"))
        .where(*contains, *_short_words(terms), *where.conditions())
        .order_by(_M.created_at.desc())
        .limit(CANDIDATES)
        .subquery()
    )
    return (
        select(*(candidates.c[column.name] for column in COLUMNS))
        .order_by(candidates.c.score.desc(), candidates.c.created_at.desc(), candidates.c.ts.desc())
        .limit(limit)
    )
