"""The Jinja2 environment for the prompts in `templates/`, built once (from app.templates).

Jinja2 is imported when the first template is rendered: the web process of a deployment with
a job worker renders none, and start-up does not wait for it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from app.templates import TEMPLATES, format_time, jinja

if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def environment() -> Environment:
    env = jinja(TEMPLATES, autoescape=False)
    env.filters["time"] = format_time
    return env


def compile_templates() -> None:
    """Compile every prompt template now (tens of milliseconds each, more on a busy machine),
    so the first prompt after a start does not wait for it (app.wiring.core.load_job_libraries)."""
    env = environment()
    for path in sorted(TEMPLATES.glob("*.j2")):
        env.get_template(path.name)


# Where a template's stable start ends (`{{ cache_break }}`): what comes before it is the same
# from one prompt to the next, the part a provider's cache mark covers (app.llm).
CACHE_BREAK = "\x1e"


def render(name: str, **context: Any) -> str:
    return "".join(render_parts(name, **context))


def render_parts(name: str, **context: Any) -> list[str]:
    """The prompt in the parts its template's cache breaks mark (one part when none)."""
    text = environment().get_template(name).render(cache_break=CACHE_BREAK, **context)
    return (text.strip() + "\n").split(CACHE_BREAK)
