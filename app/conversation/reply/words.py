"""What tomo says in a conversation in words of its own rather than the model's, in the
language of the message it answers: templates/replies/{en,ja}.j2 (the apology when the model
gives no usable answer). Rendered by the one template environment (app.llm.prompts)."""

from __future__ import annotations

from typing import Any

from app.domain import Context, language_of
from app.llm.prompts import environment

LANGUAGES = ("en", "ja")


def say(language: str, text: str, **values: Any) -> str:
    """One text, in `language` (English when it is not one of LANGUAGES)."""
    chosen = language if language in LANGUAGES else "en"
    module = environment().get_template(f"replies/{chosen}.j2").module
    return str(getattr(module, text)(**values)).strip()


def apology(language: str) -> str:
    """The reply when the model gave none (or nothing readable): try again in a moment."""
    return say(language, "apology")


def language_answered(context: Context, trigger_ts: str) -> str:
    """The language of the message a reply answers; its conversation's newest turn's when
    that message is not among the turns."""
    turns = context.target_turns()
    answered = [m for m in turns if m.ts == trigger_ts] or list(turns[-1:])
    return language_of(answered[0].text) if answered else "en"
