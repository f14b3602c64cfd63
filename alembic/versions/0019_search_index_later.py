"""the search index takes new messages in batches, off the acknowledgement's path (SQLite)

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 19:00:00.000000

On SQLite, 0015's trigger put every stored message into the FTS5 index in the transaction that
stored it. FTS5 writes a new segment of its index for every transaction that adds to it and
merges segments as they pile up, so each acknowledgement's commit paid for a segment and, now
and then, a merge (a commit of a few messages: about 0.2 ms without the index, 0.7-1.1 ms
with it, and tens of ms when a merge fell on it).

Now a stored message only leaves its rowid in `message_search_pending`; the writer moves
the pending messages into the index together, about once a second, and a search does it
first (app.db.search.index). What the triggers keep true:
- a rowid is either pending or indexed, never both;
- a deletion takes an indexed message's words out of the index, a pending one out of the
  list (FTS5's contentless 'delete' must be given exactly what was indexed, so it is never
  given a message that was not);
- an edit takes an indexed message's old words out and makes it pending again, so the next
  batch indexes its new text; a pending one stays pending.
A rowid SQLite gives again after a deletion is pending like any new row.

PostgreSQL is unchanged: pg_trgm's GIN index already gathers new entries in its pending list.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As 0015: the text as indexed has two spaces after it.
BODY = "{row}.text || '  '"
_UNLESS_PENDING = "WHERE NOT EXISTS (SELECT 1 FROM message_search_pending WHERE id = old.rowid)"
REMOVE_INDEXED = (
    "INSERT INTO message_search (message_search, rowid, body) "
    f"SELECT 'delete', old.rowid, {BODY.format(row='old')} {_UNLESS_PENDING};"
)
# Not INSERT OR IGNORE: in a trigger fired by an upsert (INSERT ... ON CONFLICT DO UPDATE, as
# app.recording.messages stores a message again), SQLite applies the outer statement's conflict
# policy, so an edit of a message still pending failed on the list's primary key.
PEND = (
    "INSERT INTO message_search_pending (id) SELECT new.rowid "
    "WHERE NOT EXISTS (SELECT 1 FROM message_search_pending WHERE id = new.rowid);"
)
UNPEND = "DELETE FROM message_search_pending WHERE id = old.rowid;"

SQLITE_UP = (
    "DROP TRIGGER IF EXISTS message_search_insert",
    "DROP TRIGGER IF EXISTS message_search_delete",
    "DROP TRIGGER IF EXISTS message_search_update",
    "CREATE TABLE message_search_pending (id INTEGER PRIMARY KEY)",
    f"CREATE TRIGGER message_search_insert AFTER INSERT ON message BEGIN {PEND} END",
    "CREATE TRIGGER message_search_delete AFTER DELETE ON message "
    f"BEGIN {REMOVE_INDEXED} {UNPEND} END",
    "CREATE TRIGGER message_search_update AFTER UPDATE OF text ON message "
    f"BEGIN {REMOVE_INDEXED} {PEND} END",
)

# Back to 0015: the pending messages indexed first, then its triggers.
_ADD = "INSERT INTO message_search (rowid, body) VALUES (new.rowid, {body});"
_REMOVE = (
    "INSERT INTO message_search (message_search, rowid, body) VALUES ('delete', old.rowid, {body});"
)
ADD = _ADD.format(body=BODY.format(row="new"))
REMOVE = _REMOVE.format(body=BODY.format(row="old"))
SQLITE_DOWN = (
    "INSERT INTO message_search (rowid, body) SELECT message.rowid, "
    f"{BODY.format(row='message')} FROM message_search_pending "
    "JOIN message ON message.rowid = message_search_pending.id",
    "DROP TRIGGER IF EXISTS message_search_insert",
    "DROP TRIGGER IF EXISTS message_search_delete",
    "DROP TRIGGER IF EXISTS message_search_update",
    "DROP TABLE IF EXISTS message_search_pending",
    f"CREATE TRIGGER message_search_insert AFTER INSERT ON message BEGIN {ADD} END",
    f"CREATE TRIGGER message_search_delete AFTER DELETE ON message BEGIN {REMOVE} END",
    "CREATE TRIGGER message_search_update AFTER UPDATE OF text ON message "
    f"BEGIN {REMOVE} {ADD} END",
)


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_UP:
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_DOWN:
            op.execute(statement)
