"""the index of people's messages the lively-channel pace counts

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 19:55:00.000000

`ix_message_people`: people's conversational messages (not deleted, not a bot's) by channel
and time, a partial index. The pace of a channel (app.conversation.timing.pace) is the number of
those within a window, counted up to a limit for every batch of acknowledged messages; through
the primary key it read each message's row to tell a person's from a bot's (about 2-4 ms for
a batch spread over 40 lively channels), through this index it reads no row.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PEOPLES_MESSAGES = (
    "kind = 'conversational' AND NOT deleted AND user_id IS NOT NULL AND bot_id IS NULL"
)


def upgrade() -> None:
    op.create_index(
        "ix_message_people",
        "message",
        ["channel", "ts"],
        sqlite_where=sa.text(PEOPLES_MESSAGES),
        postgresql_where=sa.text(PEOPLES_MESSAGES),
    )


def downgrade() -> None:
    op.drop_index("ix_message_people", table_name="message")
