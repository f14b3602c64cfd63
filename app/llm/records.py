"""What a model call answered and what it cost, logged and recorded (LLMCall), so spend and
latency are known per purpose, and per reply."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.models import LLMCall
from app.llm.tool_calls import ToolCall

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None  # of the prompt tokens, read from the provider's cache
    cost_usd: float | None
    latency_ms: float
    tool_calls: tuple[ToolCall, ...] = ()  # the tools the model asks to be run, in order


@dataclass(frozen=True)
class Call:
    purpose: str
    model: str
    started: float
    latency_ms: float
    reply_id: int | None  # the reply claim it was made for


def log_completion(purpose: str, completion: Completion) -> None:
    logger.info(
        "llm %s model=%s prompt_tokens=%s cached_tokens=%s completion_tokens=%s "
        "latency_ms=%.0f cost_usd=%s tool_calls=%d",
        purpose,
        completion.model,
        completion.prompt_tokens,
        completion.cached_tokens,
        completion.completion_tokens,
        completion.latency_ms,
        completion.cost_usd,
        len(completion.tool_calls),
    )


async def record(
    sessions: async_sessionmaker[AsyncSession],
    call: Call,
    completion: Completion | None,
    error: BaseException | None,
) -> None:
    row = LLMCall(
        purpose=call.purpose,
        model=call.model,
        started_at=call.started,
        latency_ms=call.latency_ms,
        prompt_tokens=completion.prompt_tokens if completion else None,
        cached_tokens=completion.cached_tokens if completion else None,
        completion_tokens=completion.completion_tokens if completion else None,
        cost_usd=completion.cost_usd if completion else None,
        success=error is None,
        error=f"{type(error).__name__}: {error}"[:500] if error else None,
        reply_id=call.reply_id,
    )
    try:
        async with sessions() as session:
            session.add(row)
            await session.commit()
    except Exception:
        logger.exception("could not record an LLM call")
