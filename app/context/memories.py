"""What a prompt recalls: the stored memories chosen for it within a fixed budget (docs/how-tomo-
works.md#memory).

Broad to narrow: the workspace's memories, the current channel's (always, however many
channels there are), the current channel's thread summaries (within THREAD_BUDGET_CHARS),
then other public channels' memories, the most recently active first, while the budget
lasts. Each memory is cut to MEMORY_CHAR_LIMIT, so a prompt's memory sections never exceed
MEMORY_BUDGET_CHARS plus their headings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from app.db.models import Channel, Memory
from app.domain import ChannelMemory

MEMORY_CHAR_LIMIT = 2000  # one memory's share of a prompt
MEMORY_BUDGET_CHARS = 20_000  # all memories of one prompt together
THREAD_BUDGET_CHARS = 5000  # of which thread summaries
CHANNEL_MEMORY_LIMIT = 20  # channels whose memories a prompt shows
THREAD_MEMORY_LIMIT = 10  # thread summaries a prompt shows


def clip(text: str | None, limit: int = MEMORY_CHAR_LIMIT) -> str | None:
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Recalled:
    workspace: dict[str, str] = field(default_factory=dict)  # kind -> memory
    channels: dict[str, ChannelMemory] = field(default_factory=dict)  # current channel first
    threads: dict[str, str] = field(default_factory=dict)  # thread_ts -> summary
    left: int = MEMORY_BUDGET_CHARS

    def take(self, *texts: str | None, always: bool = False) -> bool:
        size = sum(len(t) for t in texts if t)
        if size > self.left and not always:
            return False
        self.left -= size
        return True


def _channel_memory(
    channel_id: str, channels: dict[str, Channel], rows: Iterable[Memory]
) -> ChannelMemory:
    kinds = {m.kind: clip(m.content) for m in rows}
    channel = channels.get(channel_id)
    return ChannelMemory(
        channel_id=channel_id,
        channel_name=(channel.name if channel else "") or channel_id,
        long_term_memory=kinds.get("long_term"),
        short_term_memory=kinds.get("short_term"),
    )


def recall(
    memories: Iterable[Memory], *, channel_id: str, channels: dict[str, Channel]
) -> Recalled:
    """Choose from `memories` (ordered most wanted first) what one prompt about `channel_id`
    shows."""
    recalled = Recalled()
    by_channel: dict[str, list[Memory]] = {}
    threads: list[Memory] = []
    for memory in memories:
        if memory.scope == "workspace" and memory.content:
            text = clip(memory.content) or ""
            if recalled.take(text):
                recalled.workspace[memory.kind] = text
        elif memory.scope == "channel":
            by_channel.setdefault(memory.scope_id, []).append(memory)
        elif memory.scope == "thread":
            threads.append(memory)

    here = _channel_memory(channel_id, channels, by_channel.pop(channel_id, []))
    if here.long_term_memory or here.short_term_memory:
        recalled.take(here.long_term_memory, here.short_term_memory, always=True)
        recalled.channels[channel_id] = here
    thread_left = THREAD_BUDGET_CHARS
    for memory in threads[:THREAD_MEMORY_LIMIT]:
        summary = clip(memory.content) or ""
        if summary and len(summary) <= thread_left and recalled.take(summary):
            thread_left -= len(summary)
            recalled.threads[memory.scope_id.split(":", 1)[1]] = summary
    for other_id, rows in by_channel.items():
        if len(recalled.channels) >= CHANNEL_MEMORY_LIMIT + 1:
            break
        other = _channel_memory(other_id, channels, rows)
        if recalled.take(other.long_term_memory, other.short_term_memory):
            recalled.channels[other_id] = other
    return recalled
