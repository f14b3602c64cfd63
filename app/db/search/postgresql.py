"""Search on PostgreSQL: pg_trgm's GIN index on `message.text` (migration 0015), which ILIKE
uses for words of three characters or more.

A GIN index answers with every matching row at once, in no order, and a word found in half
the messages would have all of them read. So the newest PROBE_ROWS messages the reader may
see are read first: a word common enough to be found `limit` times there is answered from
them. Otherwise the index finds the (then few) rows. Words of one or two characters have no
trigram: beside a longer word they are checked on its rows; alone they are looked for among
the newest SHORT_SCAN_ROWS messages.

Ranked by pg_trgm's similarity of the query to the text (`relevance`), ties newest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.search.rows import (
    COLUMNS,
    SHORT_SCAN_ROWS,
    Where,
    contains,
    in_channel,
    newest,
    recent,
)
from app.db.search.terms import Terms

PROBE_ROWS = 1000
PROBE_CANDIDATES = 200  # of the newest messages' matches, ranked (word_similarity is costly)
CANDIDATES = 1000


async def postgresql_search(
    connection: AsyncConnection, terms: Terms, where: Where, limit: int
) -> Sequence[Row[Any]]:
    # Planned for these words each time: a plan made once for any words (PostgreSQL's generic
    # plan of a prepared statement, which asyncpg's are) reads rare words' rows by time.
    await connection.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    if where.channel is not None:
        found, complete = await in_channel(
            connection, terms, where, limit, lambda text: relevance(terms, text)
        )
        if complete or len(found) >= limit:
            return found
    if not terms.long:
        bound = await recent(connection, SHORT_SCAN_ROWS)
        short = _newest_matching(terms, where.after(bound), SHORT_SCAN_ROWS, limit)
        return (await connection.execute(short)).all()
    probe = where.after(await recent(connection, PROBE_ROWS))
    newest_matches = _newest_matching(terms, probe, PROBE_ROWS, PROBE_CANDIDATES)
    found = (await connection.execute(_ranked(newest_matches, terms, limit))).all()
    if len(found) >= limit:
        return found
    return (await connection.execute(_indexed(terms, where, limit))).all()


def _newest_matching(terms: Terms, where: Where, rows: int, limit: int) -> Select[Any]:
    """The newest `limit` messages with every word among the newest `rows` of `where` (bounded
    by `recent`): those rows are read by time, in a subquery, so that PostgreSQL checks the
    words on each rather than building the trigram index's bitmap of a common word first."""
    recent = newest(where, rows, by_time=False).subquery()
    return (
        select(*recent.c)
        .where(*contains((*terms.long, *terms.short), recent.c.text))
        .order_by(recent.c.created_at.desc())
        .limit(limit)
    )


def relevance(terms: Terms, text: Any) -> ColumnElement[float]:
    """How well the text matches: how closely some stretch of it matches the query
    (word_similarity; 1 when it holds every word), plus how much of the whole text the query
    is (similarity), so that of two texts holding the words the shorter, more focused one
    comes first, as BM25 weighs a text's length."""
    return func.word_similarity(terms.text, text) + func.similarity(terms.text, text)


def _ranked(statement: Any, terms: Terms, limit: int) -> Select[Any]:
    rows = statement if not isinstance(statement, Select) else statement.subquery()
    score = relevance(terms, rows.c.text)
    return (
        select(*(rows.c[column.name] for column in COLUMNS))
        .order_by(score.desc(), rows.c.created_at.desc(), rows.c.ts.desc())
        .limit(limit)
    )


def _indexed(terms: Terms, where: Where, limit: int) -> Select[Any]:
    # MATERIALIZED: planned on its own, where the GIN index is the way to the rows (inlined,
    # the ORDER BY ... LIMIT outside would have the newest rows read one by one instead).
    matches = (
        select(*COLUMNS)
        .where(*contains((*terms.long, *terms.short)), *where.conditions())
        .limit(CANDIDATES)
        .cte("matches")
        .prefix_with("MATERIALIZED")
    )
    return _ranked(matches, terms, limit)
