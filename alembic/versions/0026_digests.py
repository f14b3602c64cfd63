"""channel digests: their schedules, and a claim per digest posted

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29 11:00:00.000000

`digest_schedule`: a channel's `/tomo digest daily|weekly` schedule (the wall-clock time in
TIMEZONE, the next due time, where the previous digest ended). `digest_run`: one row per digest
(a channel and its due time, unique), so a digest is posted once across restarts and instances.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "digest_schedule",
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("cadence", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("weekday", sa.Integer(), nullable=True),
        sa.Column("hour", sa.Integer(), nullable=False),
        sa.Column("minute", sa.Integer(), nullable=False),
        sa.Column("next_due_at", sa.Float(), nullable=False),
        sa.Column("last_until", sa.Float(), nullable=True),
        sa.Column("set_by", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("set_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("channel"),
    )
    op.create_table(
        "digest_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("due_at", sa.Float(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("since", sa.Float(), nullable=False),
        sa.Column("until", sa.Float(), nullable=False),
        sa.Column("messages", sa.Integer(), nullable=False),
        sa.Column("chunks", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("posted_ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True),
        sa.Column("error", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("finished_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel", "due_at", name="uq_digest_run_due"),
    )
    op.create_index("ix_digest_run_created", "digest_run", ["created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_digest_run_created", table_name="digest_run")
    op.drop_table("digest_run")
    op.drop_table("digest_schedule")
