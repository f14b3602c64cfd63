"""The tables, by what they hold: Slack's messages (`messages`), the workspace (`workspace`),
what tomo decided and did in a conversation (`conversation`), its memories and notes
(`memory`), its calls to models (`calls`), digests (`digest`), MCP servers and approvals
(`mcp`). Importing this package registers every table in SQLModel.metadata (alembic/env.py
does). Times are UNIX epoch seconds (float) so SQLite and PostgreSQL agree."""

from app.db.models.calls import LLMCall
from app.db.models.conversation import Feedback, Judgment, OnIt, Reply
from app.db.models.digest import DigestRun, DigestSchedule
from app.db.models.mcp import ApprovalState, McpApproval, McpServerState, McpSwitch
from app.db.models.memory import Memory, Note
from app.db.models.messages import PEOPLES_MESSAGES, TOP_LEVEL, Message, Removal, SeenEvent
from app.db.models.workspace import Channel, ChannelControl, ConversationChange, Erasure, Person

__all__ = [
    "PEOPLES_MESSAGES",
    "TOP_LEVEL",
    "ApprovalState",
    "Channel",
    "ChannelControl",
    "ConversationChange",
    "DigestRun",
    "DigestSchedule",
    "Erasure",
    "Feedback",
    "Judgment",
    "LLMCall",
    "McpApproval",
    "McpServerState",
    "McpSwitch",
    "Memory",
    "Message",
    "Note",
    "OnIt",
    "Person",
    "Removal",
    "Reply",
    "SeenEvent",
]
