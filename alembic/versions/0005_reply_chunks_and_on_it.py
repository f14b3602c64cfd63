"""reply chunks and on-it marks

Revision ID: 0005
Revises: 0002
Create Date: 2026-11-23 09:00:00.000000

A claim stores the messages it is about to post, so a claim taken over (after a restart or an
uncertain post) finishes posting the same ones after looking them up in Slack; `on_it` keeps
each "on it" sign set in Slack until it is cleared, so one left by a stopped process is
cleared at the next start.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("reply", schema=None) as batch_op:
        batch_op.add_column(sa.Column("chunks", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
    op.create_table(
        "on_it",
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("thread_ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("set_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("channel", "ts"),
    )


def downgrade() -> None:
    op.drop_table("on_it")
    with op.batch_alter_table("reply", schema=None) as batch_op:
        batch_op.drop_column("chunks")
