"""What the tools are built with: the long-lived parts of the process that runs replies. Each
tool's class takes a Kit (`Tool(kit)`); app.tools.registry picks the tools a reply offers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from app.gate.scopes import Scopes
from app.llm import LLM
from app.recording.recorder import Recorder
from app.settings import Settings
from app.slack.identity import Identity
from app.slack.web.client import SlackClient


@dataclass(frozen=True)
class Kit:
    settings: Settings
    engine: AsyncEngine
    slack: SlackClient
    identity: Identity  # who tomo is, and its workspace's URL (permalinks)
    llm: LLM
    scopes: Scopes
    # Stores what a tool fetched from Slack, through the gate (None: a tool stores nothing).
    recorder: Recorder | None = None
