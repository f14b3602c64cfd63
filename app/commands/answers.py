"""What `/tomo` answers, in English or Japanese: `templates/commands/{en,ja}.j2`, one macro per
answer (Slack mrkdwn). Jinja2 is imported at the first answer, not at start-up."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from app.templates import TEMPLATES, format_time, jinja

if TYPE_CHECKING:
    from jinja2 import Environment


@dataclass(frozen=True)
class Said:
    """A command's answer (a macro of the templates and its values), and the work to do after
    it (`later`: returns a text for the command's response_url, or None)."""

    answer: str
    values: dict[str, Any]
    later: Callable[[], Awaitable[str | None]] | None = None


def slack_time(epoch: float) -> str:
    """A time Slack shows in the reader's own time zone and locale (UTC where it cannot)."""
    return f"<!date^{int(epoch)}^{{date_short_pretty}} {{time}}|{format_time(epoch)}>"


def escape(text: str) -> str:
    """Text shown as it is: Slack's control characters escaped, so nothing in it links,
    mentions or pings."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoted(text: str) -> str:
    return "\n".join(f">{line}" for line in escape(text).splitlines() or [""])


@cache
def _environment() -> Environment:
    env = jinja(TEMPLATES / "commands", autoescape=False)
    env.filters["when"] = slack_time
    return env


def say(language: str, answer: str, **values: Any) -> str:
    """The text of one answer (`answer`: a macro of the language's template)."""
    module = _environment().get_template(f"{language}.j2").module
    return str(getattr(module, answer)(**values)).strip()
