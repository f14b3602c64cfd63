"""Search on SQLite: the FTS5 trigram table `message_search` of migration 0015.

Words of three characters or more are FTS5 phrases, all of which must occur. A word of one or
two characters beside them is checked on the rows they found. Alone, it is looked up through
the index's vocabulary (`message_search_terms`): every text is indexed with two spaces after
it, so each occurrence of a short word begins some trigram, and the message has the word if
it has any trigram that begins with it. A word that begins more than MAX_TRIGRAMS trigrams is
looked for among the newest messages instead (app.db.search.rows.scanned).

Ranked by `relevance` (BM25's weighting of a word's occurrences by the text's length), ties
newest first, among the newest CANDIDATES matches the reader may see in
the PROBE_ROWS messages stored last when there are enough there, else in all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, func, literal, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.search.rows import (
    COLUMNS,
    MESSAGES,
    SHORT_SCAN_ROWS,
    M,
    Where,
    contains,
    in_channel,
    recent,
    scanned,
)
from app.db.search.terms import Terms, any_of, phrase, prefix_range

CANDIDATES = 1000
MAX_TRIGRAMS = 500
# The newest messages (by rowid: the order they were stored in) read first: a word common
# enough to be found `limit` times there is answered from them, without reading the rest of
# its very long list of rows.
PROBE_ROWS = 20_000
AVERAGE_CHARS = 100.0

_INDEX = table("message_search")
_INDEX_ROWID: ColumnElement[Any] = literal_column("message_search.rowid")
_MESSAGE_ROWID: ColumnElement[Any] = literal_column("message.rowid")
_TERM: ColumnElement[str] = literal_column("term")


async def sqlite_search(
    connection: AsyncConnection, terms: Terms, where: Where, limit: int
) -> Sequence[Row[Any]]:
    words = (*terms.long, *terms.short)
    if where.channel is not None:
        found, complete = await in_channel(
            connection, terms, where, limit, lambda text: relevance(words, text)
        )
        if complete or len(found) >= limit:
            return found
    queries = [phrase(word) for word in terms.long]
    checks = contains(terms.short)
    if not queries:
        for word in terms.short:
            trigrams = await _beginning_with(connection, word)
            if not trigrams:
                return []  # in no message at all
            if len(trigrams) > MAX_TRIGRAMS:
                bound = await recent(connection, SHORT_SCAN_ROWS)
                return (await connection.execute(scanned(terms, where.after(bound), limit))).all()
            queries.append(any_of(trigrams))
        checks = []  # each trigram found begins with its word
    match = " AND ".join(queries)
    score = relevance(words)
    newest_rowid = await connection.scalar(select(func.max(_MESSAGE_ROWID)).select_from(MESSAGES))
    if newest_rowid is not None and newest_rowid > PROBE_ROWS:
        probe = _matching(match, score, where, checks, limit, after=newest_rowid - PROBE_ROWS)
        found = (await connection.execute(probe)).all()
        if len(found) >= limit:
            return found
    return (await connection.execute(_matching(match, score, where, checks, limit))).all()


async def _beginning_with(connection: AsyncConnection, word: str) -> list[str]:
    """The index's trigrams that begin with a short word (at most MAX_TRIGRAMS + 1)."""
    low, high = prefix_range(word)
    trigrams = await connection.execute(
        select(_TERM)
        .select_from(table("message_search_terms"))
        .where(_TERM >= low, _TERM < high)
        .limit(MAX_TRIGRAMS + 1)
    )
    return [str(t) for t in trigrams.scalars()]


def _matching(
    match: str,
    score: ColumnElement[float],
    where: Where,
    checks: list[ColumnElement[bool]],
    limit: int,
    *,
    after: int | None = None,
) -> Select[Any]:
    """The best `limit` of the newest CANDIDATES matches; `after`: of the rows stored after
    that rowid only (FTS5 reads only the end of each word's list of rows)."""
    matched = literal_column("message_search").op("MATCH")(match)
    since = [] if after is None else [_INDEX_ROWID > after]
    candidates = (
        select(_INDEX_ROWID.label("id"))
        .select_from(_INDEX.join(MESSAGES, _MESSAGE_ROWID == _INDEX_ROWID))
        .where(matched, *since, *where.conditions(), *checks)
        .order_by(_INDEX_ROWID.desc())
        .limit(CANDIDATES)
        .subquery()
    )
    return (
        select(*COLUMNS)
        .select_from(candidates.join(MESSAGES, _MESSAGE_ROWID == candidates.c.id))
        .order_by(score.desc(), M.created_at.desc(), M.ts.desc())
        .limit(limit)
    )


def relevance(words: tuple[str, ...], column: Any = M.text) -> ColumnElement[float]:
    """BM25's weight of each word's occurrences in a text of its length (k1 1.2, b 0.75, an
    average text of AVERAGE_CHARS), summed. Without BM25's rarity of each word: every row
    ranked has every word, and FTS5's bm25() would count the rows of each word in the whole
    index on every query (a tenth of a second for a common word in a million messages)."""
    text = func.lower(column)
    length = func.max(func.length(column), 1)
    norm = 1.2 * (0.25 + 0.75 * length / AVERAGE_CHARS)
    total: ColumnElement[float] = literal(0.0)
    for word in words:
        low = word.lower()
        count = (func.length(text) - func.length(func.replace(text, low, ""))) / len(low)
        total = total + count * 2.2 / (count + norm)
    return total
