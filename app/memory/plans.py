"""Which memories a run rewrites or removes, and the prompt each one is written from."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.memories import clip
from app.db.models import Channel, Memory
from app.domain import ChatMessage
from app.llm.prompts import render
from app.memory import sources
from app.memory.sources import Activity
from app.slack.identity import Me

STORED_CHAR_LIMIT = 6000  # a memory longer than this is cut
WORKSPACE_SOURCE_CHARS = 30_000  # channel memories a workspace memory is written from
WORKSPACE_SOURCE_EACH = 3000

Key = tuple[str, str, str]  # scope, scope_id, kind
Written = tuple[str, str]  # the system prompt, the source_ts it covers
Prompt = Callable[[AsyncSession], Awaitable[Written | None]]
Step = tuple[Key, Prompt]


class InvalidMemory(ValueError):
    """The model's answer cannot be a memory."""


def clean(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.removesuffix("```").strip()
    if not body:
        raise InvalidMemory("the answer is empty")
    if "[memory:" in body:
        raise InvalidMemory("the answer repeats the prompt")
    if len(body) > STORED_CHAR_LIMIT:
        body = body[: STORED_CHAR_LIMIT - 1] + "…"
    return body


def name_of(channels: dict[str, Channel], channel_id: str) -> str:
    channel = channels.get(channel_id)
    return (channel.name if channel else "") or channel_id


def _changed_since(memory: Memory, activity: Activity) -> bool:
    return max(activity.last_edit, activity.last_removal) > memory.updated_at


@dataclass(frozen=True)
class Planner:
    persona_name: str
    short_term_hours: float
    now: float
    me: Me
    # channel id -> when its memories were forgotten: only later messages feed them.
    forgets: dict[str, float] = field(default_factory=dict)

    def _after(self, channel_id: str) -> float:
        return self.forgets.get(channel_id, 0.0)

    def _render(self, template: str, messages: list[ChatMessage], **values: object) -> Written:
        prompt = render(
            template,
            persona_name=self.persona_name,
            window_hours=f"{self.short_term_hours:g}",
            now=self.now,
            messages=messages,
            **values,
        )
        return prompt, max(m.ts for m in messages)

    def channels(
        self,
        channels: dict[str, Channel],
        active: dict[str, Activity],
        recent: dict[str, Activity],
        stored: dict[Key, Memory],
    ) -> list[Step]:
        steps: list[Step] = []
        for channel_id, activity in recent.items():
            key = ("channel", channel_id, "short_term")
            memory = stored.get(key)
            if memory and memory.source_ts == activity.newest_ts:
                if not _changed_since(memory, activity):
                    continue
            steps.append((key, self._short_term(channel_id, name_of(channels, channel_id))))
        for channel_id, activity in active.items():
            key = ("channel", channel_id, "long_term")
            memory = stored.get(key)
            newest = activity.newest_ts or ""
            name = name_of(channels, channel_id)
            if memory is None:
                steps.append((key, self._long_term(channel_id, name, None)))
            elif newest < memory.source_ts or activity.last_removal > memory.updated_at:
                steps.append((key, self._long_term_afresh(channel_id, name)))
            elif newest > memory.source_ts or activity.last_edit > memory.updated_at:
                steps.append((key, self._long_term(channel_id, name, memory)))
        return steps

    def _short_term(self, channel_id: str, name: str) -> Prompt:
        async def prompt(session: AsyncSession) -> Written | None:
            since = self.now - self.short_term_hours * 3600
            messages = await sources.window_messages(
                session, channel=channel_id, since=since, me=self.me, after=self._after(channel_id)
            )
            if not messages:
                return None
            return self._render("memory_channel_short_term.j2", messages, channel_name=name)

        return prompt

    def _long_term(self, channel_id: str, name: str, previous: Memory | None) -> Prompt:
        async def prompt(session: AsyncSession) -> Written | None:
            messages = await sources.new_messages(
                session,
                channel=channel_id,
                after_ts=previous.source_ts if previous else "",
                edited_after=previous.updated_at if previous else self.now,
                me=self.me,
                after=self._after(channel_id),
            )
            if not messages:
                return None
            system, newest = self._render(
                "memory_channel_long_term.j2",
                messages,
                channel_name=name,
                previous=previous.content if previous else None,
            )
            return system, max(newest, previous.source_ts if previous else "")

        return prompt

    def _long_term_afresh(self, channel_id: str, name: str) -> Prompt:
        """After a deletion: from the stored messages alone, so nothing deleted lingers."""

        async def prompt(session: AsyncSession) -> Written | None:
            messages = await sources.latest_messages(
                session, channel=channel_id, me=self.me, after=self._after(channel_id)
            )
            if not messages:
                return None
            return self._render(
                "memory_channel_long_term.j2", messages, channel_name=name, previous=None
            )

        return prompt

    def threads(
        self,
        channels: dict[str, Channel],
        threads: dict[tuple[str, str], Activity],
        stored: dict[Key, Memory],
    ) -> list[Step]:
        steps: list[Step] = []
        for (channel_id, thread_ts), activity in threads.items():
            key = ("thread", f"{channel_id}:{thread_ts}", "summary")
            memory = stored.get(key)
            if memory and memory.source_ts == activity.newest_ts:
                if not _changed_since(memory, activity):
                    continue
            steps.append((key, self._thread(channel_id, thread_ts, name_of(channels, channel_id))))
        return steps

    def _thread(self, channel_id: str, thread_ts: str, name: str) -> Prompt:
        async def prompt(session: AsyncSession) -> Written | None:
            messages = await sources.thread_messages(
                session,
                channel=channel_id,
                thread_ts=thread_ts,
                me=self.me,
                after=self._after(channel_id),
            )
            if not any(m.thread_ts for m in messages):
                return None
            return self._render(
                "memory_thread_summary.j2", messages, channel_name=name, thread_ts=thread_ts
            )

        return prompt

    def removable(
        self,
        recent: dict[str, Activity],
        threads: dict[tuple[str, str], Activity],
        stored: dict[Key, Memory],
    ) -> list[Key]:
        """Short-term memories whose window is empty; summaries of threads no longer recent."""
        keys = []
        for key in stored:
            scope, scope_id, kind = key
            if scope == "channel" and kind == "short_term" and scope_id not in recent:
                keys.append(key)
            if scope == "thread" and tuple(scope_id.split(":", 1)) not in threads:
                keys.append(key)
        return keys

    def workspace(
        self, channels: dict[str, Channel], stored: dict[Key, Memory], *, short_removed: bool
    ) -> tuple[list[Step], list[Key]]:
        """What to write of the workspace's memories, and what to remove (nothing to tell)."""
        steps: list[Step] = []
        removals: list[Key] = []
        for kind in ("short_term", "long_term"):
            key = ("workspace", "", kind)
            inputs = _shared_memories(channels, stored, kind)
            memory = stored.get(key)
            if not inputs:
                removals += [key] if memory else []
                continue
            newest = max(m.source_ts for m in inputs)
            if (
                memory is None
                or memory.source_ts != newest
                or max(m.updated_at for m in inputs) > memory.updated_at
                or (kind == "short_term" and short_removed)
            ):
                steps.append((key, self._workspace(kind, channels, inputs, newest)))
        return steps, removals

    def _workspace(
        self, kind: str, channels: dict[str, Channel], inputs: list[Memory], newest: str
    ) -> Prompt:
        notes = [
            (name_of(channels, m.scope_id), clip(m.content, WORKSPACE_SOURCE_EACH) or "")
            for m in inputs
        ]

        async def prompt(session: AsyncSession) -> Written | None:
            system = render(
                f"memory_workspace_{kind}.j2",
                persona_name=self.persona_name,
                window_hours=f"{self.short_term_hours:g}",
                now=self.now,
                channel_notes=notes,
            )
            return system, newest

        return prompt


def _shared_memories(
    channels: dict[str, Channel], stored: dict[Key, Memory], kind: str
) -> list[Memory]:
    """The public channels' memories of this kind, the most recent first, within a budget."""
    candidates: Iterable[Memory] = (
        m
        for (scope, scope_id, k), m in stored.items()
        if scope == "channel" and k == kind and sources.shared(channels.get(scope_id))
    )
    chosen: list[Memory] = []
    size = 0
    for memory in sorted(candidates, key=lambda m: m.source_ts, reverse=True):
        size += min(len(memory.content), WORKSPACE_SOURCE_EACH)
        if chosen and size > WORKSPACE_SOURCE_CHARS:
            break
        chosen.append(memory)
    return chosen
