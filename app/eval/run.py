"""Asking the judgment model about every point: tomo's own judgment prompt
(app.conversation.judgment.service.judgment_messages, templates/judgment.j2, the follow-up section
for a
follow-up) through tomo's LiteLLM wrapper, the answer read by tomo's own parser; several at
once, with a progress bar on stderr."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from tqdm import tqdm

from app.conversation.judgment.answer import InvalidVerdict, parse_verdict
from app.conversation.judgment.service import judgment_messages
from app.eval.points import Point
from app.eval.slack_view import Waits, point_context
from app.llm import LLM, LLMError
from app.settings import Settings


@dataclass(frozen=True)
class Answer:
    point: Point
    variant: str
    spoke: bool
    unparseable: bool = False
    failed: bool = False  # the model did not answer (after LiteLLM's retries)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


async def _ask(llm: LLM, settings: Settings, point: Point, variant: str) -> Answer:
    context = point_context(
        point,
        variant=variant,
        persona_name=settings.PERSONA_NAME,
        persona_prompt=settings.persona_prompt,
        waits=Waits(join=settings.MIN_WAIT_SECONDS, follow_up=settings.FOLLOW_UP_WAIT_SECONDS),
    )
    messages = judgment_messages(context, follow_up=point.kind == "follow_up")
    try:
        completion = await llm.complete(purpose="judgment", messages=messages)
    except LLMError:
        return Answer(point, variant, spoke=False, failed=True)
    try:
        verdict = parse_verdict(completion.text, max_delay=settings.MAX_REPLY_DELAY_SECONDS)
        spoke, unparseable = verdict.should_respond, False
    except InvalidVerdict:  # tomo stays silent on an answer it cannot read
        spoke, unparseable = False, True
    return Answer(
        point,
        variant,
        spoke=spoke,
        unparseable=unparseable,
        prompt_tokens=completion.prompt_tokens or 0,
        completion_tokens=completion.completion_tokens or 0,
        cost_usd=completion.cost_usd,
    )


async def ask_all(
    points: Sequence[Point],
    *,
    variants: Sequence[str],
    settings: Settings,
    concurrency: int,
    progress: bool = True,
) -> list[Answer]:
    """Every point under every variant, in that order, at most `concurrency` calls at once."""
    llm = LLM(settings)
    gate = asyncio.Semaphore(concurrency)
    jobs = [(point, variant) for variant in variants for point in points]
    bar = tqdm(total=len(jobs), file=sys.stderr, disable=not progress, unit="point")

    async def one(point: Point, variant: str) -> Answer:
        async with gate:
            answer = await _ask(llm, settings, point, variant)
        bar.update()
        return answer

    try:
        return list(await asyncio.gather(*(one(p, v) for p, v in jobs)))
    finally:
        bar.close()
