"""a channel's standing instructions

Revision ID: 0025
Revises: 0022
Create Date: 2026-11-29 10:00:00.000000

`channel_control` gains `instructions` (what `/tomo instructions TEXT` set for the channel, at
most 1,000 characters; NULL when none), who set them and when. Every judgment and reply prompt
of the channel shows them (app.context.instructions).
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0025"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("channel_control") as table:
        table.add_column(
            sa.Column("instructions", sqlmodel.sql.sqltypes.AutoString(length=1000), nullable=True)
        )
        table.add_column(
            sa.Column(
                "instructions_by",
                sqlmodel.sql.sqltypes.AutoString(length=32),
                nullable=False,
                server_default="",
            )
        )
        table.add_column(sa.Column("instructions_at", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("channel_control") as table:
        table.drop_column("instructions_at")
        table.drop_column("instructions_by")
        table.drop_column("instructions")
