"""a judgment marked as a follow-up's

Revision ID: 0011
Revises: 0009
Create Date: 2026-11-25 13:00:00.000000

Whether a decision judged a follow-up: a person's message in a conversation tomo takes part
in (docs/how-tomo-works.md#follow-ups), shown on the admin page. Decisions stored before are
not follow-ups.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("follow_up", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.drop_column("follow_up")
