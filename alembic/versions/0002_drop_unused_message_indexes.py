"""drop the message indexes no query uses

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 05:10:00.000000

Every stored message updated six B-trees on the acknowledgement path; no query filters or
orders by (channel, conversation_ts) or by route, so those two indexes only cost writes.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_index("ix_message_route")
        batch_op.drop_index("ix_message_conversation")


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.create_index(
            "ix_message_conversation", ["channel", "conversation_ts", "ts"], unique=False
        )
        batch_op.create_index("ix_message_route", ["route", "created_at"], unique=False)
