"""tools from MCP servers: what each offers, per-channel switches, calls awaiting approval

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-01 10:00:00.000000

`mcp_server`: each MCP server as the process that runs replies last found it (ok or
unreachable) and the tools tomo may offer from it, for /healthz and `/tomo tools`.
`mcp_switch`: servers and tools switched off in a channel (`/tomo tools off`).
`mcp_approval`: calls of `approve` tools waiting for, or done after, a person's decision.
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _text(length: int) -> sqlmodel.sql.sqltypes.AutoString:
    return sqlmodel.sql.sqltypes.AutoString(length=length)


def upgrade() -> None:
    op.create_table(
        "mcp_server",
        sa.Column("name", _text(32), nullable=False),
        sa.Column("state", _text(16), nullable=False),
        sa.Column("tools", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("error", _text(300), nullable=True),
        sa.Column("checked_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "mcp_switch",
        sa.Column("channel", _text(32), nullable=False),
        sa.Column("name", _text(100), nullable=False),
        sa.Column("user_id", _text(32), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("channel", "name"),
    )
    op.create_table(
        "mcp_approval",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel", _text(32), nullable=False),
        sa.Column("thread_ts", _text(32), nullable=False),
        sa.Column("reply_thread_ts", _text(32), nullable=False),
        sa.Column("trigger_ts", _text(32), nullable=False),
        sa.Column("reason", _text(16), nullable=False),
        sa.Column("claim_id", sa.Integer(), nullable=False),
        sa.Column("user_id", _text(32), nullable=False),
        sa.Column("language", _text(8), nullable=False),
        sa.Column("server", _text(32), nullable=False),
        sa.Column("tool", _text(100), nullable=False),
        sa.Column("arguments", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("call_id", _text(100), nullable=False),
        sa.Column("state", _text(16), nullable=False),
        sa.Column("decision", _text(16), nullable=True),
        sa.Column("decided_by", _text(32), nullable=True),
        sa.Column("card_ts", _text(32), nullable=True),
        sa.Column("result", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("decided_at", sa.Float(), nullable=True),
        sa.Column("called_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_mcp_approval_state", "mcp_approval", ["state"], unique=False)
    op.create_index("ix_mcp_approval_claim", "mcp_approval", ["claim_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_mcp_approval_claim", table_name="mcp_approval")
    op.drop_index("ix_mcp_approval_state", table_name="mcp_approval")
    op.drop_table("mcp_approval")
    op.drop_table("mcp_switch")
    op.drop_table("mcp_server")
