"""What `/tomo` does (docs/how-tomo-works.md#tomo): help, status, quiet, mentions-only, normal,
memory, forget; instructions (app.commands.instructions), digest (app.commands.digest).

Each command is answered from the database and the timers alone, in milliseconds; work that
needs the model (the workspace memory rebuilt after a forget) is returned as `later`, for the
route to run after the answer and report through the command's response_url.

The answer's language: Japanese when the command's text is written in Japanese (`/tomo 静かに
2時間`); otherwise the language of the person's latest message in the workspace (last 7 days),
since command words like `status` tell nothing; English when there is none.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.commands import tools as tool_switches
from app.commands.answers import escape, quoted, say
from app.commands.digest import DigestCommand, RunDigest
from app.commands.instructions import InstructionsCommand
from app.commands.words import Action, BadDuration, parse_duration
from app.commands.words import parse_words as parse_command_words
from app.context.memories import clip
from app.conversation.timing.participation import Participation
from app.conversation.voice.channel_modes import Mode, set_mode
from app.conversation.voice.own_voice import OwnVoice
from app.db.models import Memory, Message
from app.digest.timers import DigestTimers
from app.domain import is_japanese, language_of
from app.jobs.backend import TimerBackend
from app.jobs.kinds import JobKind
from app.memory import notebook
from app.memory.control import forget_channel, remembered
from app.retention.forget import ForgottenMessages
from app.settings import Settings
from app.slack.identity import Identity
from app.slack.interactive.commands import SlashCommand
from app.slack.web.client import SlackClient

logger = logging.getLogger(__name__)

LANGUAGE_LOOKBACK_SECONDS = 7 * 86400.0
MEMORY_CHARS = {"long_term": 1500, "short_term": 800, "summary": 300}  # one memory, shown
MEMORY_ANSWER_CHARS = 3500  # all of them (Slack shows about 4,000 characters unfolded)

Later = Callable[[], Awaitable[str | None]]
# Deletes a channel's messages stored before a moment (app.retention.forget).
ForgetMessages = Callable[[str, float], Awaitable[ForgottenMessages]]


@dataclass(frozen=True)
class Answer:
    text: str
    language: str
    later: Later | None = None  # after the answer: returns a follow-up text, or None


class Commands:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        slack: SlackClient,
        timers: TimerBackend,
        voice: OwnVoice,
        participation: Participation,
        identity: Identity,
        persona_name: str,
        auto_reply_channels: frozenset[str],
        rebuild_memories: Callable[[], Awaitable[object]],
        forget_messages: ForgetMessages,
        settings: Settings | None = None,
        digests: DigestTimers,
        run_digest: RunDigest,
        zone: ZoneInfo,
    ) -> None:
        """`settings`: for `/tomo tools` (the tools TOOLS and MCP_SERVERS offer)."""
        self._settings = settings
        self._engine = engine
        self._timers = timers
        self._voice = voice
        self._participation = participation
        self._identity = identity
        self._persona = persona_name
        self._auto_reply = auto_reply_channels
        self._rebuild_memories = rebuild_memories
        self._forget_messages = forget_messages
        self._instructions = InstructionsCommand(engine=engine, slack=slack)
        self._digest = DigestCommand(engine=engine, digests=digests, run=run_digest, zone=zone)

    async def language(self, command: SlashCommand) -> str:
        if is_japanese(command.text):
            return "ja"
        since = time.time() - LANGUAGE_LOOKBACK_SECONDS
        async with self._engine.connect() as connection:
            latest = await connection.execute(
                select(col(Message.text))
                .where(
                    col(Message.user_id) == command.user_id,
                    col(Message.created_at) >= since,
                    col(Message.deleted).is_(False),
                )
                .order_by(col(Message.created_at).desc())
                .limit(1)
            )
            text = latest.scalar_one_or_none()
        return language_of(text or "")

    async def answer(self, command: SlashCommand, *, language: str) -> Answer:
        parsed = parse_command_words(command.text)
        channel, user = command.channel_id, command.user_id

        def reply(answer: str, later: Later | None = None, **values: Any) -> Answer:
            return Answer(say(language, answer, **values), language, later)

        if parsed.action is Action.HELP:
            return reply("help", persona=self._persona)
        if parsed.action is Action.UNKNOWN:
            return reply("unknown", words=escape(parsed.words), persona=self._persona)
        if parsed.action is Action.STATUS:
            return reply("status", **await self._status(channel))
        if parsed.action is Action.QUIET:
            until = None
            if parsed.argument:
                try:
                    until = time.time() + parse_duration(parsed.argument)
                except BadDuration:
                    return reply("bad_duration", given=escape(parsed.argument))
            await self._set(channel, Mode.QUIET, user=user, until=until)
            return reply("quiet_set", until=until)
        if parsed.action is Action.MENTIONS_ONLY:
            await self._set(channel, Mode.MENTIONS_ONLY, user=user)
            return reply("mentions_only_set")
        if parsed.action is Action.NORMAL:
            await self._set(channel, Mode.NORMAL, user=user)
            return reply("normal_set")
        if parsed.action is Action.MEMORY:
            return reply("memory", **await self._memory(channel))
        if parsed.action is Action.TOOLS:
            answer, values = await self._tools(channel, user, parsed.argument)
            return reply(answer, **values)
        if parsed.action is Action.INSTRUCTIONS:
            said = await self._instructions.run(
                channel=channel, user=user, text=parsed.text, language=language
            )
            return reply(said.answer, said.later, **said.values)
        if parsed.action is Action.DIGEST:
            said = await self._digest.run(
                channel=channel, user=user, argument=parsed.argument, language=language
            )
            return reply(said.answer, said.later, **said.values)
        forgotten = await forget_channel(self._engine, channel=channel, user=user)
        for timer in await self._timers.list():  # of the calls that waited for approval
            if timer.kind is JobKind.APPROVAL and timer.channel == channel:
                await self._timers.remove(timer.id)
        deleted = await self._forget_messages(channel, forgotten.at)
        logger.info(
            "channel %s forgotten by %s: %d memories, %d notes, %d approvals, %d messages "
            "(%d files) deleted",
            channel,
            user,
            forgotten.memories,
            forgotten.notes,
            forgotten.approvals,
            deleted.messages,
            deleted.files,
        )
        return reply(
            "forget_done",
            later=lambda: self._after_forget(language, forgotten.at),
            count=forgotten.memories,
            messages=deleted.messages,
            files=deleted.files,
            notes=forgotten.notes,
        )

    async def _tools(self, channel: str, user: str, words: str) -> tuple[str, dict[str, Any]]:
        """`/tomo tools`, `/tomo tools off NAME`, `/tomo tools on NAME` (app.commands.tools)."""
        if self._settings is None:
            return "tools_list", {"own": [], "servers": []}
        from app.tools.mcp.servers import CHECK_SECONDS  # how old a server's state may be

        stale_after = 3 * CHECK_SECONDS
        if not words:
            listed = await tool_switches.listing(
                self._engine, self._settings, channel=channel, stale_after=stale_after
            )
            return "tools_list", listed
        return await tool_switches.switch_tool(
            self._engine,
            self._settings,
            channel=channel,
            user=user,
            words=words,
            stale_after=stale_after,
        )

    async def _set(
        self, channel: str, mode: Mode, *, user: str, until: float | None = None
    ) -> None:
        await set_mode(self._engine, channel=channel, mode=mode, user=user, quiet_until=until)
        logger.info(
            "channel %s mode set to %s%s by %s",
            channel,
            mode.value,
            f" until {until:.0f}" if until else "",
            user,
        )

    async def _status(self, channel: str) -> dict[str, Any]:
        now = time.time()
        mode = await self._voice.mode(channel, now=now)
        activity = await self._voice.activity(channel, now=now)
        timers = [
            t
            for t in await self._timers.list()
            if t.channel == channel
            and t.kind in (JobKind.JUDGMENT, JobKind.REPLY)
            and t.seconds_left is not None
        ]
        cooldown_left = 0.0
        if activity.last_joined_at is not None:
            cooldown_left = max(0.0, activity.last_joined_at + self._voice.cooldown - now)
        return {
            "persona": self._persona,
            "mode": mode,
            "timers": timers,  # soonest first, as the timers list them
            "last_joined_at": activity.last_joined_at,
            "replies_today": activity.replies_today,
            "cooldown": self._voice.cooldown,
            "cooldown_left": cooldown_left,
            "cap": self._voice.daily_cap,
            "auto_reply": channel in self._auto_reply,
            "taking_part": await self._participation.joined(
                channel=channel,
                user_id=self._identity.user_id,
                now=now,
            ),
            "digest": await self._digest.schedule(channel),
        }

    async def _memory(self, channel: str) -> dict[str, Any]:
        async with self._engine.connect() as connection:
            memories = await remembered(connection, channel)
            notes = await notebook.of_channel(connection, channel)
            workspace_notes = await notebook.workspace_count(connection)
        mode = await self._voice.mode(channel)
        items, left = [], MEMORY_ANSWER_CHARS
        for memory in memories:
            content = clip(memory.content, MEMORY_CHARS.get(memory.kind, 300)) or ""
            if len(content) > left:
                break
            left -= len(content)
            items.append(
                {
                    "kind": memory.kind,
                    "thread_ts": memory.scope_id.partition(":")[2] or "0",
                    "updated_at": memory.updated_at,
                    "quoted": quoted(content),
                }
            )
        shown = []
        for note in notes:
            if len(note.text) > left:
                break
            left -= len(note.text)
            shown.append({**vars(note), "quoted": quoted(note.text)})
        return {
            "items": items,
            "forgotten_at": mode.forgotten_at,
            "notes": shown,
            "workspace_notes": workspace_notes,
        }

    async def _after_forget(self, language: str, forgotten_at: float) -> str:
        """Rebuild the workspace memory now (waiting for a memory pass under way), then say
        whether there is one."""
        await self._rebuild_memories()
        async with self._engine.connect() as connection:
            rebuilt = await connection.execute(
                select(col(Memory.id)).where(
                    col(Memory.scope) == "workspace", col(Memory.updated_at) >= forgotten_at
                )
            )
            found = rebuilt.first() is not None
        return say(language, "forget_rebuilt" if found else "forget_no_workspace_memory")
