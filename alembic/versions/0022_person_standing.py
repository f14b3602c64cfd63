"""guests and people of other organisations read less: what users.info says of a person

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28 23:00:00.000000

`person.is_guest`: users.info's `is_restricted` or `is_ultra_restricted` (a multi- or
single-channel guest); null for a person learnt before this was kept, asked again before a
reply's scope relies on it (app.gate.scopes). `person.enterprise_id`: the Enterprise
organisation the person belongs to (`enterprise_user.enterprise_id`), so that a person of
another workspace of tomo's own organisation is not counted as an outsider.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("person", schema=None) as batch_op:
        batch_op.add_column(sa.Column("is_guest", sa.Boolean(), nullable=True))
        batch_op.add_column(
            sa.Column(
                "enterprise_id",
                sqlmodel.sql.sqltypes.AutoString(length=32),
                nullable=False,
                server_default="",
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("person", schema=None) as batch_op:
        batch_op.drop_column("enterprise_id")
        batch_op.drop_column("is_guest")
