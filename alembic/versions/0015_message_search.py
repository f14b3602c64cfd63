"""the search index of stored messages

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 15:10:00.000000

What `search_messages` reads (app.db.search.service): an index of every stored message's text that
finds words and parts of words in any language, kept by the database itself, so that every
deletion of a message (retention, Slack's deletions, /tomo forget, a deleted channel, an
uninstall) takes its words out of the index in the same statement.

- SQLite: a contentless FTS5 table with the trigram tokenizer, `message_search`, whose rowid
  is the message's rowid, kept by triggers on insert, delete and change of `message.text`.
  Each text is indexed with two spaces after it, so that every occurrence of a word of one or
  two characters begins some trigram (app.db.search.sqlite reads those from the index's own
  vocabulary, `message_search_terms`). No column sizes are kept (`columnsize=0`): they serve
  only FTS5's bm25(), which the search does not use, and cost a quarter of each insert.
  A migration that rebuilds the message table on SQLite (batch_alter_table) drops these
  triggers with it, and must build them and the index again.
- PostgreSQL: pg_trgm's GIN index on `message.text`, which LIKE and ILIKE use; a deletion
  leaves it with the row, as every index.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The text as indexed: two spaces after it (see above). The triggers and the first fill must
# all index the same value, or a deletion would take out words that were never put in.
BODY = "{row}.text || '  '"
_ADD = "INSERT INTO message_search (rowid, body) VALUES (new.rowid, {body});"
_REMOVE = (
    "INSERT INTO message_search (message_search, rowid, body) VALUES ('delete', old.rowid, {body});"
)
ADD = _ADD.format(body=BODY.format(row="new"))
REMOVE = _REMOVE.format(body=BODY.format(row="old"))

SQLITE_UP = (
    "CREATE VIRTUAL TABLE message_search USING fts5(body, content='', tokenize='trigram', "
    "columnsize=0)",
    "CREATE VIRTUAL TABLE message_search_terms USING fts5vocab(message_search, 'row')",
    f"INSERT INTO message_search (rowid, body) SELECT rowid, {BODY.format(row='message')} "
    "FROM message",
    f"CREATE TRIGGER message_search_insert AFTER INSERT ON message BEGIN {ADD} END",
    f"CREATE TRIGGER message_search_delete AFTER DELETE ON message BEGIN {REMOVE} END",
    "CREATE TRIGGER message_search_update AFTER UPDATE OF text ON message "
    f"BEGIN {REMOVE} {ADD} END",
)
SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS message_search_update",
    "DROP TRIGGER IF EXISTS message_search_delete",
    "DROP TRIGGER IF EXISTS message_search_insert",
    "DROP TABLE IF EXISTS message_search_terms",
    "DROP TABLE IF EXISTS message_search",
)
POSTGRESQL_UP = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS ix_message_text_trgm ON message USING gin (text gin_trgm_ops)",
)
POSTGRESQL_DOWN = ("DROP INDEX IF EXISTS ix_message_text_trgm",)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_UP if dialect == "sqlite" else POSTGRESQL_UP:
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_DOWN if dialect == "sqlite" else POSTGRESQL_DOWN:
        op.execute(statement)
