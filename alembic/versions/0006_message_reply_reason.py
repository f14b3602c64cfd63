"""why a message is answered

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 21:00:00.000000

A message routed to a reply keeps why (mention, dm, auto_reply), so a reply restored after a
restart is the same kind of reply: an auto-reply stays subject to the channel's mode.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reply_reason", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_column("reply_reason")
