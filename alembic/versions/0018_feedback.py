"""feedback people gave tomo's replies

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 15:15:00.000000

`feedback`: a person's 👍 or 👎 on one of tomo's replies (Slack's feedback buttons), one per
person and message, with the reply claim the buttons were posted with.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("reply_ts", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("value", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("claim_id", sa.Integer(), nullable=True),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("channel", "reply_ts", "user_id", name="uq_feedback_click"),
    )
    op.create_index("ix_feedback_at", "feedback", ["at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_feedback_at", table_name="feedback")
    op.drop_table("feedback")
