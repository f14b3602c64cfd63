"""tomo's notebook

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 15:00:00.000000

`note`: what tomo wrote down with its `note` tool, in the conversation it was written in and
scoped like it (a public channel's note is the workspace's, any other conversation's its own).
One note per (claim, text): a reply run again after a restart does not write it twice.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "note",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("conversation", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("text", sqlmodel.sql.sqltypes.AutoString(length=1000), nullable=False),
        sa.Column("text_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("importance", sa.Integer(), nullable=False),
        sa.Column("about", sqlmodel.sql.sqltypes.AutoString(length=400), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("claim_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("claim_id", "text_hash", name="uq_note_claim_text"),
    )
    op.create_index("ix_note_conversation", "note", ["conversation", "created_at"], unique=False)
    op.create_index("ix_note_scope", "note", ["scope", "importance", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_note_scope", table_name="note")
    op.drop_index("ix_note_conversation", table_name="note")
    op.drop_table("note")
