"""channel_control: each channel's /tomo mode and when its memories were forgotten

Revision ID: 0004
Revises: 0002
Create Date: 2026-11-23 09:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "channel_control",
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("mode", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("quiet_until", sa.Float(), nullable=True),
        sa.Column("changed_by", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("changed_at", sa.Float(), nullable=False),
        sa.Column("forgotten_at", sa.Float(), nullable=True),
        sa.Column("forgotten_by", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.PrimaryKeyConstraint("channel"),
    )


def downgrade() -> None:
    op.drop_table("channel_control")
