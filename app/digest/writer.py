"""The digest written by the model (LLM_MODEL, purpose `digest`): one call for a period that
fits in one prompt; for a longer one (a busy day of thousands of messages), notes on each part
first — whole conversations packed into parts of at most PROMPT_TOKENS, a conversation larger
than that cut between messages — then the digest from the notes. The messages keep their
numbers throughout, so the digest's citations still name them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from app.digest.messages import Conversation, Numbered, Period
from app.domain import is_japanese
from app.llm import LLM, system_message
from app.llm.prompts import render, render_parts

# The most a prompt's messages may take, in tokens (estimated): well inside the context of
# every model tomo is run with (gpt-4o-mini's is 128k), with room for the answer.
PROMPT_TOKENS = 24_000
DIGEST_TOKENS = 1500  # the digest's answer at most
NOTES_TOKENS = 900  # one part's notes at most
PARTS_AT_ONCE = 3
JAPANESE_SHARE = 0.3  # of the messages: the digest's title is written in Japanese


def estimate_tokens(text: str) -> int:
    """About how many tokens `text` takes: a token per four ASCII characters, one for each
    other (Japanese takes about one a character); no tokenizer needed."""
    wide = sum(1 for character in text if ord(character) > 127)
    return wide + (len(text) - wide) // 4 + 1


def language_of(messages: Sequence[Numbered]) -> str:
    """`ja` when enough of the messages are Japanese, else `en`."""
    if not messages:
        return "en"
    japanese = sum(1 for m in messages if is_japanese(m.text))
    return "ja" if japanese / len(messages) >= JAPANESE_SHARE else "en"


@dataclass(frozen=True)
class Written:
    body: str  # the model's digest, its citations as [n]
    title: str  # the title line tomo puts above it
    calls: int


def _line(message: Numbered, zone: ZoneInfo) -> dict[str, Any]:
    return {
        "number": message.number,
        "time": datetime.fromtimestamp(message.created_at, zone).strftime("%a %H:%M"),
        "author": message.author,
        "text": message.text,
    }


def _shown(conversation: Conversation, messages: Sequence[Numbered], zone: ZoneInfo) -> Any:
    began = conversation.messages[0].created_at if conversation.messages else 0.0
    return {
        "thread": bool(conversation.thread_ts),
        "began": datetime.fromtimestamp(began, zone).strftime("%a %H:%M"),
        "messages": [_line(m, zone) for m in messages],
    }


def parts_of(period: Period, zone: ZoneInfo, *, budget: int = PROMPT_TOKENS) -> list[list[Any]]:
    """The conversations as the prompts show them, packed into parts of at most `budget`
    tokens each: whole conversations where they fit, cut between messages where not."""
    parts: list[list[Any]] = []
    current: list[Any] = []
    used = 0
    for conversation in period.conversations:
        sizes = [
            estimate_tokens(f"[{m.number}] Mon 00:00 {m.author}: {m.text}")
            for m in conversation.messages
        ]
        if current and sum(sizes) <= budget < used + sum(sizes):
            parts.append(current)  # the next part takes the whole conversation
            current, used = [], 0
        piece: list[Numbered] = []
        for message, size in zip(conversation.messages, sizes, strict=True):
            if (piece or current) and used + size > budget:
                if piece:
                    current.append(_shown(conversation, piece, zone))
                parts.append(current)
                current, used, piece = [], 0, []
            piece.append(message)
            used += size
        if piece:
            current.append(_shown(conversation, piece, zone))
    if current or not parts:
        parts.append(current)
    return parts


class DigestWriter:
    def __init__(self, *, llm: LLM, persona_name: str, persona_prompt: str, zone: ZoneInfo):
        self._llm = llm
        self._persona = {"persona_name": persona_name, "persona_prompt": persona_prompt}
        self._zone = zone

    def _when(self, epoch: float) -> str:
        return datetime.fromtimestamp(epoch, self._zone).strftime("%a %d %b %H:%M")

    async def write(
        self,
        period: Period,
        *,
        channel_name: str,
        instructions: str | None,
        since: float,
        until: float,
    ) -> Written:
        language = language_of(period.messages)
        frame = {
            "channel_name": channel_name,
            "since": self._when(since),
            "until": self._when(until),
            "timezone": str(self._zone),
        }
        parts = parts_of(period, self._zone)
        notes: list[str] = []
        if len(parts) > 1:
            notes = await self._notes(parts, frame)
        prompt = render_parts(
            "digest.j2",
            **self._persona,
            **frame,
            instructions=instructions,
            language="Japanese"
            if language == "ja"
            else "the language most of the messages are written in",
            conversations=parts[0] if len(parts) == 1 else [],
            notes=notes,
        )
        answer = await self._llm.complete(
            purpose="digest", messages=[system_message(prompt)], max_tokens=DIGEST_TOKENS
        )
        title = render("digest_post.j2", language=language, count=len(period.messages), **frame)
        return Written(body=answer.text.strip(), title=title.strip(), calls=len(notes) + 1)

    async def _notes(self, parts: list[list[Any]], frame: dict[str, str]) -> list[str]:
        gate = asyncio.Semaphore(PARTS_AT_ONCE)
        most = max(6, 60 // len(parts))

        async def note(number: int, part: list[Any]) -> str:
            prompt = render_parts(
                "digest_notes.j2",
                **frame,
                part=number,
                parts=len(parts),
                most=most,
                conversations=part,
            )
            async with gate:
                answer = await self._llm.complete(
                    purpose="digest", messages=[system_message(prompt)], max_tokens=NOTES_TOKENS
                )
            return answer.text.strip()

        return list(await asyncio.gather(*(note(n, p) for n, p in enumerate(parts, 1))))
