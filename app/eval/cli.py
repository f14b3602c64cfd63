"""`python -m app.eval --model MODEL [--json FILE] [--limit N] [--concurrency N] [--variant V]`:
how well a model's judgments with tomo's own prompt match when people spoke (eval/README.md).

The model is called through LiteLLM with the usual settings (LLM_API_BASE, LLM_API_KEY, a
provider's own key variable such as OPENAI_API_KEY, LLM_TIMEOUT_SECONDS, ...; a `.env` is read).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from app.eval.baselines import baselines
from app.eval.points import DataError, load_points
from app.eval.report import report, table
from app.eval.run import ask_all
from app.eval.sample import stratified
from app.eval.slack_view import VARIANTS
from app.settings import load_settings


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m app.eval", description=__doc__)
    parser.add_argument("--model", required=True, help="a LiteLLM model, e.g. openai/gpt-4o-mini")
    parser.add_argument("--json", type=Path, help="write the full report here as JSON")
    parser.add_argument(
        "--limit",
        type=int,
        help="only N decision points, spread over languages and kinds (the same N every run)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="model calls at once")
    parser.add_argument(
        "--variant",
        action="append",
        choices=VARIANTS,
        help="how messages are shown (repeat to compare; default: prefixed)",
    )
    parser.add_argument("--data", type=Path, action="append", help="data files (default: eval/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    if arguments.limit is not None and arguments.limit < 1:
        parser.error("--limit must be at least 1")
    if arguments.concurrency < 1:
        parser.error("--concurrency must be at least 1")
    arguments.variant = list(dict.fromkeys(arguments.variant or VARIANTS[:1]))
    return arguments


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    try:
        points = load_points(arguments.data)
    except (OSError, DataError) as error:
        print(f"cannot read the data: {error}", file=sys.stderr)
        return 2
    points = stratified(points, arguments.limit) if arguments.limit else points
    # The Slack secrets are not needed: nothing here talks to Slack.
    settings = load_settings(
        SLACK_SIGNING_SECRET="eval", SLACK_BOT_TOKEN="xoxb-eval", LLM_JUDGMENT_MODEL=arguments.model
    )
    for noisy in ("app", "LiteLLM", "litellm", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    answers = asyncio.run(
        ask_all(
            points,
            variants=arguments.variant,
            settings=settings,
            concurrency=arguments.concurrency,
            progress=not arguments.quiet,
        )
    )
    result = report(
        model=arguments.model,
        answers=answers,
        variants=arguments.variant,
        baselines=baselines(points),
    )
    print(table(result))
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return 0
