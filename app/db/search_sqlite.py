"""Search on SQLite: the FTS5 trigram table `message_search` of migration 0015.

Words of three characters or more are FTS5 phrases, all of which must occur. A word of one or
two characters beside them is checked on the rows they found. Alone, it is looked up through
the index's vocabulary (`message_search_terms`): every text is indexed with two spaces after
it, so each occurrence of a short word begins some trigram, and the message has the word if
it has any trigram that begins with it. A word that begins more than MAX_TRIGRAMS trigrams is
looked for among the newest messages instead (app.db.search_rows.scanned).

Ranked by bm25, ties newest first, among the newest CANDIDATES matches the reader may see.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.search_rows import (
    COLUMNS,
    MESSAGES,
    SHORT_SCAN_ROWS,
    M,
    Where,
    contains,
    newest,
    recent,
    scanned,
)
from app.db.search_terms import Terms, any_of, phrase, prefix_range

CANDIDATES = 1000
MAX_TRIGRAMS = 500

_INDEX = table("message_search")
_INDEX_ROWID: ColumnElement[Any] = literal_column("message_search.rowid")
_MESSAGE_ROWID: ColumnElement[Any] = literal_column("message.rowid")
_TERM: ColumnElement[str] = literal_column("term")


async def sqlite_search(
    connection: AsyncConnection, terms: Terms, where: Where, limit: int
) -> Select[Any]:
    queries = [phrase(word) for word in terms.long]
    checks = contains(terms.short)
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
                return newest(where, 0)  # in no message at all
            if len(found) > MAX_TRIGRAMS:
                bound = await recent(connection, SHORT_SCAN_ROWS)
                return scanned(terms, where.after(bound), limit)
            queries.append(any_of(found))
        checks = []  # each trigram found begins with its word
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
        .order_by(candidates.c.score, M.created_at.desc(), M.ts.desc())
        .limit(limit)
    )
