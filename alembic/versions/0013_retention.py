"""what Slack deleted, and what tomo must erase

Revision ID: 0013
Revises: 0011
Create Date: 2026-11-25 12:40:00.000000

`removal`: where and when a message Slack deleted was (its row is deleted), so memories built
from it are written again without it. `erasure`: a channel deleted or left, or the app
uninstalled: nothing more of it is stored, and its deletion resumes after a restart.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0013"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "removal",
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("thread_ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("removed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("channel", "ts"),
    )
    op.create_index("ix_removal_created", "removal", ["created_at"], unique=False)
    op.create_table(
        "erasure",
        sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("target", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("reason", sqlmodel.sql.sqltypes.AutoString(length=24), nullable=False),
        sa.Column("requested_at", sa.Float(), nullable=False),
        sa.Column("done_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("scope", "target"),
    )
    # Messages only marked deleted until now are deleted, their removal noted.
    op.execute(
        "INSERT INTO removal (channel, ts, thread_ts, created_at, removed_at) "
        "SELECT channel, ts, thread_ts, created_at, COALESCE(edited_at, created_at) "
        "FROM message WHERE deleted"
    )
    op.execute("DELETE FROM message WHERE deleted")


def downgrade() -> None:
    op.drop_table("erasure")
    op.drop_index("ix_removal_created", table_name="removal")
    op.drop_table("removal")
