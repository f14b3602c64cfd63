"""Where tomo's words live (`templates/`) and how a Jinja2 environment on them is made: undefined
names are errors, block tags leave no blank lines behind. The prompts' environment
(app.llm.prompts), /tomo's answers, the assistant's words, the approval cards and the admin page
each build theirs from here.

Jinja2 is imported when the first environment is made: start-up does not wait for it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import Environment

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


def format_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC")


def jinja(folder: Path, *, autoescape: bool) -> Environment:
    """A Jinja2 environment on `folder`: undefined names are errors, block tags leave no
    blank lines behind."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(folder),
        undefined=StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
