"""What tomo offers in its messages tab, in English or Japanese: templates/assistant/{en,ja}.j2
(the suggested prompts' title and prompts, a thread's title). Jinja2 is imported at the first
use, not at start-up."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from app.templates import TEMPLATES, jinja

if TYPE_CHECKING:
    from jinja2 import Environment

LANGUAGES = ("en", "ja")
MAX_PROMPTS = 4  # Slack shows at most four
TITLE_LIMIT = 60  # a thread's title: its first words


@cache
def _environment() -> Environment:
    return jinja(TEMPLATES / "assistant", autoescape=False)


def _module(language: str) -> Any:
    return _environment().get_template(f"{language if language in LANGUAGES else 'en'}.j2").module


def suggested(language: str) -> tuple[str, list[dict[str, str]]]:
    """The title over the prompts, and the prompts (`title`, `message`)."""
    module = _module(language)
    prompts = [{"title": str(p["title"]), "message": str(p["message"])} for p in module.prompts]
    return str(module.title), prompts[:MAX_PROMPTS]


def thread_title(language: str, text: str) -> str:
    """A DM thread's title from the words that opened it."""
    first = " ".join(text.split())
    if len(first) > TITLE_LIMIT:
        first = first[: TITLE_LIMIT - 1].rstrip() + "…"
    return str(_module(language).thread_title(first)).strip()
