"""message kind: conversational or system

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 09:00:00.000000

What kind of message a row is (app.slack.kinds): only conversational messages are turns,
triggers or a conversation's newest message; system messages (joins, topics, pins, huddles)
are notes. Rows stored before are classified by their subtype, as the parser does; the
tombstones of deleted thread parents stored from thread history become deleted rows, and
hidden `message_replied` notices stored as messages become system rows.
"""

import time
from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CONVERSATIONAL_SUBTYPES = ("file_share", "thread_broadcast", "me_message", "bot_message")


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "kind",
                sqlmodel.sql.sqltypes.AutoString(length=16),
                nullable=False,
                server_default="conversational",
            )
        )
    message = sa.table(
        "message",
        sa.column("kind", sa.String),
        sa.column("subtype", sa.String),
        sa.column("text", sa.String),
        sa.column("deleted", sa.Boolean),
        sa.column("edited_at", sa.Float),
    )
    op.execute(
        message.update()
        .where(message.c.subtype.is_not(None))
        .where(message.c.subtype.not_in(CONVERSATIONAL_SUBTYPES))
        .values(kind="system")
    )
    op.execute(
        message.update()
        .where(message.c.subtype == "tombstone")
        # edited_at marks the removal, so memories built from the row are rebuilt.
        .values(deleted=True, text="", edited_at=time.time())
    )


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_column("kind")
