"""What the tools are built with: the long-lived parts of the process that runs replies. Each
tool's class takes a Kit (`Tool(kit)`); app.tools.registry picks the tools a reply offers."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from app.llm import LLM
from app.settings import Settings
from app.slack.client import SlackClient
from app.slack.identity import Identity
from app.tools.scope import Scopes


@dataclass(frozen=True)
class Kit:
    settings: Settings
    engine: AsyncEngine
    slack: SlackClient
    identity: Identity  # who tomo is, and its workspace's URL (permalinks)
    llm: LLM
    scopes: Scopes
