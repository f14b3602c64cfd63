"""model calls recorded under their reply

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 15:10:00.000000

A reply may take several model calls (rounds of tool calls, then its answer): each call records
the reply claim it was made for, so the records show which calls one reply made. No foreign
key: calls and claims each expire on their own.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reply_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_llm_call_reply", ["reply_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("llm_call", schema=None) as batch_op:
        batch_op.drop_index("ix_llm_call_reply")
        batch_op.drop_column("reply_id")
