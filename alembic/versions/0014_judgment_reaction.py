"""the reaction a judgment gave instead of a reply

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25 18:30:00.000000

The emoji tomo added to a closing follow-up ("thanks!") instead of replying, once Slack took
it: shown with the decision on the admin page. Decisions stored before have none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("reaction", sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("judgment", schema=None) as batch_op:
        batch_op.drop_column("reaction")
