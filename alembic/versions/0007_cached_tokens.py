"""cached prompt tokens per model call

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 22:30:00.000000

The prompt tokens a provider reports it read from its cache (billed at a fraction of the price),
so the spend per call shows what caching saved.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cached_tokens", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.drop_column("cached_tokens")
