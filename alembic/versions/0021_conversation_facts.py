"""who may see what follows Slack now: a channel shared with another organisation, and when a
conversation's members or kind last changed

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28 22:40:00.000000

`channel.is_ext_shared`: a Slack Connect channel (people of another organisation read it),
written by the channel sync and by `channel_shared` / `channel_unshared` as they are recorded.
`conversation_change`: a person's or a conversation's id, and when Slack last told of a
member joining or leaving (`member_joined_channel`, `member_left_channel`) or of the
conversation made private or public: what a process learnt from Slack before then about its
members is asked again (app.gate.scopes), on every instance.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("channel", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("is_ext_shared", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    op.create_table(
        "conversation_change",
        sa.Column("key", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("changed_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("conversation_change")
    with op.batch_alter_table("channel", schema=None) as batch_op:
        batch_op.drop_column("is_ext_shared")
