"""the files a message carries

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 01:00:00.000000

What Slack says of each file a message carries (name, type, size, where to download it), as
JSON, and once a document has been read, the start of its text: every prompt and memory built
from the message shows it without downloading the file again.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.add_column(sa.Column("files", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("message", schema=None) as batch_op:
        batch_op.drop_column("files")
