"""`python -m app.replay FILE`: replay a conversation through tomo and print its timeline.

Each message goes through the same ingress, routing, judgment and reply code as in Slack, with
time compressed (`--speed`), against a temporary SQLite database. Slack is never contacted. The
model is the configured one when a provider key or `LLM_API_BASE` is set; otherwise (or with
`--mock`) LiteLLM's own mock responses answer, and the output says so.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import TextIO

from app.llm.model_keys import missing_model_key
from app.observability.logs import TextFormatter
from app.replay.conversation import ReplayError, ReplayLine, parse_conversation
from app.replay.run import Replay, Summary
from app.replay.timeline import JobNotes
from app.settings import Settings, load_settings

DEFAULT_SPEED = 100.0
OFFLINE_LABEL = "OFFLINE: LiteLLM mock responses"


async def offline_reason(settings: Settings) -> str | None:
    """Why no real model can be asked, or None when one can."""
    return await missing_model_key(settings, models=(settings.judgment_model, settings.LLM_MODEL))


def _header(
    out: TextIO, *, name: str, lines: list[ReplayLine], settings: Settings, speed: float
) -> None:
    channels = len({line.channel for line in lines})
    out.write(
        f"tomo replay: {name}: {_count(len(lines), 'message')} in "
        f"{_count(channels, 'channel')}, "
        f"time x{speed:g}; Slack is not contacted\n"
        f"waits: MIN_WAIT_SECONDS {settings.MIN_WAIT_SECONDS:g} "
        f"± {settings.JITTER_RATIO:.0%}, MAX_REPLY_DELAY_SECONDS "
        f"{settings.MAX_REPLY_DELAY_SECONDS:g}; follow-ups: FOLLOW_UP_WAIT_SECONDS "
        f"{settings.FOLLOW_UP_WAIT_SECONDS:g} within FOLLOW_UP_WINDOW_SECONDS "
        f"{settings.FOLLOW_UP_WINDOW_SECONDS:g}\n"
    )


def _count(number: int, one: str, many: str | None = None) -> str:
    """`1 message`, `2 messages`."""
    return f"{number} {one if number == 1 else many or one + 's'}"


def _footer(out: TextIO, summary: Summary, *, offline: bool) -> None:
    cost = "unknown" if summary.cost_usd is None else f"${summary.cost_usd:.6f}"
    if offline:
        cost += " (mock usage, not real spend)"
    out.write(
        f"\n{_count(summary.messages, 'message')}, {_count(summary.judgments, 'judgment')} "
        f"({summary.responded} to respond), {_count(summary.replies, 'reply', 'replies')} posted; "
        f"{_count(summary.llm_calls, 'LLM call')}, {_count(summary.tokens, 'token')}, "
        f"cost {cost}\n"
    )
    if offline:
        out.write(f"{OFFLINE_LABEL}: no model was asked.\n")


async def replay(
    lines: list[ReplayLine],
    *,
    settings: Settings,
    name: str = "conversation",
    speed: float = DEFAULT_SPEED,
    mock: bool = False,
    timeout: float = 300.0,
    out: TextIO = sys.stdout,
) -> Summary:
    """Replay the conversation and print its timeline to `out`."""
    reason = "--mock" if mock else await offline_reason(settings)
    _header(out, name=name, lines=lines, settings=settings, speed=speed)
    if reason is not None:
        out.write(f"{OFFLINE_LABEL} ({reason})\n")
        out.write("  offline judgments respond to questions only; replies are canned\n\n")
    else:
        where = settings.LLM_API_BASE or "the provider's API"
        out.write(
            f"model: {settings.LLM_MODEL} (judgment: {settings.judgment_model}) via {where}\n\n"
        )
    out.flush()
    notes = JobNotes()
    app_logger = logging.getLogger("app")
    level = app_logger.level
    app_logger.addHandler(notes)
    app_logger.setLevel(min(logging.INFO, level or logging.INFO))
    try:
        summary = await Replay(lines, settings=settings, speed=speed, out=out).run(
            offline=reason is not None, timeout=timeout
        )
    finally:
        app_logger.removeHandler(notes)
        app_logger.setLevel(level)
    _footer(out, summary, offline=reason is not None)
    return summary


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m app.replay", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("file", type=Path, help="the conversation, as JSON lines")
    parser.add_argument(
        "--speed",
        type=float,
        default=DEFAULT_SPEED,
        help=f"divide every wait by this (default {DEFAULT_SPEED:g})",
    )
    parser.add_argument("--mock", action="store_true", help="use mock answers even with a key")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="real seconds to wait for pending timers"
    )
    parser.add_argument("--verbose", action="store_true", help="print tomo's own log lines too")
    arguments = parser.parse_args(argv)
    if not arguments.speed > 0:
        parser.error("--speed must be more than 0")
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    try:
        lines = parse_conversation(arguments.file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ReplayError) as error:
        print(f"cannot replay {arguments.file}: {error}", file=sys.stderr)
        return 2
    # The Slack secrets are not needed: the replay never talks to Slack.
    settings = load_settings(SLACK_SIGNING_SECRET="replay", SLACK_BOT_TOKEN="xoxb-replay")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(TextFormatter())
    handler.setLevel(logging.INFO if arguments.verbose else logging.WARNING)
    logging.getLogger().addHandler(handler)
    for noisy in ("LiteLLM", "litellm", "httpx", "httpcore", "apscheduler", "aiosqlite", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    summary = asyncio.run(
        replay(
            lines,
            settings=settings,
            name=str(arguments.file),
            speed=arguments.speed,
            mock=arguments.mock,
            timeout=arguments.timeout,
        )
    )
    return 0 if summary.finished else 1
