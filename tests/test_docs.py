"""The documentation holds together: every relative link of the README and of docs/*.md leads to
a file that exists and, with a #fragment, to a heading there (named as GitHub names it); and every
setting of app/settings/ is in the reference, docs/settings.md, with the code's default."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REFERENCE = ROOT / "docs" / "settings.md"

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
CODE_SPAN = re.compile(r"(`+).+?\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
HTML_LINK = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=\"([^\"]+)\"")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
TABLE_ROW = re.compile(r"^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|", re.MULTILINE)


def prose(text: str) -> Iterator[tuple[int, str]]:
    """The lines of a Markdown text outside fenced code blocks, numbered from 1."""
    fence = ""
    for number, line in enumerate(text.splitlines(), start=1):
        opening = FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening.group(1)
            continue
        yield number, line


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading (github-slugger): the rendered text lower-cased, every
    character but letters, digits, marks, `-`, `_` and spaces dropped, spaces made hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags show nothing
    text = re.sub(r"(?<![0-9A-Za-z])_+|_+(?![0-9A-Za-z])", "", text)  # _emphasis_ markers
    kept = "".join(c for c in text.lower() if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every #fragment a link may name in a page: its headings' slugs, a repeated one numbered
    as GitHub does (`-1`, `-2`), and explicit `<a name>`/`<a id>` anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose(page.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading is None:
            continue
        slug = github_slug(heading.group(1))
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        found.add(slug)
    return found


def links(page: Path) -> Iterator[tuple[int, str]]:
    """Every link target of a page outside code, with its line number."""
    for number, line in prose(page.read_text(encoding="utf-8")):
        text = CODE_SPAN.sub("", line)
        for pattern in (INLINE_LINK, LINK_DEFINITION, HTML_LINK):
            for target in pattern.findall(text):
                yield number, target


def broken_links(page: Path) -> list[str]:
    problems = []
    for number, target in links(page):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # another site: not this repository's to check
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        path, _, fragment = target.partition("#")
        linked = (page.parent / unquote(path)).resolve() if path else page
        if not linked.is_relative_to(ROOT):
            problems.append(f"{where}: outside the repository")
        elif not linked.exists():
            problems.append(f"{where}: no such file")
        elif fragment and linked.suffix == ".md" and unquote(fragment) not in anchors(linked):
            problems.append(f"{where}: no heading with that anchor in {linked.name}")
    return problems


def test_anchors_are_named_as_github_names_them() -> None:
    assert github_slug("/tomo") == "tomo"
    assert github_slug("Tests: scripts/test") == "tests-scriptstest"
    assert github_slug("One instance, the default") == "one-instance-the-default"
    assert github_slug("What's new in `JOB_BACKEND`?") == "whats-new-in-job_backend"
    assert github_slug("Foo & Bar") == "foo--bar"
    assert github_slug("[Heroku](https://heroku.com) 日本語") == "heroku-日本語"
    assert github_slug("Never *twice*") == "never-twice"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    problems = broken_links(page)
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_the_readme_leads_to_every_page() -> None:
    readme = ROOT / "README.md"
    linked = {
        (readme.parent / unquote(target.partition("#")[0])).resolve() for _, target in links(readme)
    }
    unlinked = [page.name for page in PAGES if page != readme and page not in linked]
    assert not unlinked, f"docs pages the README does not link to: {unlinked}"


def reference_rows() -> dict[str, str]:
    """docs/settings.md's table rows: each setting's name and its default column."""
    return dict(TABLE_ROW.findall(REFERENCE.read_text(encoding="utf-8")))


def environment_names() -> dict[str, str]:
    """Each field of Settings by the environment variable that sets it."""
    prefix = str(Settings.model_config.get("env_prefix") or "")
    names = {}
    for field_name, field in Settings.model_fields.items():
        alias = field.validation_alias or field.alias
        names[alias if isinstance(alias, str) else prefix + field_name] = field_name
    return names


def test_every_setting_is_in_the_reference() -> None:
    rows = reference_rows()
    missing = sorted(name for name in environment_names() if name not in rows)
    assert not missing, f"settings missing from docs/settings.md's tables: {missing}"


def test_the_reference_gives_the_code_s_defaults() -> None:
    rows = reference_rows()
    wrong = []
    for name, field_name in environment_names().items():
        field = Settings.model_fields[field_name]
        default = field.default
        if field.is_required() or default is None or isinstance(default, frozenset):
            continue  # "required", "unset", "empty": said in words
        if isinstance(default, tuple):
            default = ",".join(default)  # as it is written in the environment
        if isinstance(default, bool):
            default = str(default).lower()
        if f"`{default}`" not in rows.get(name, ""):
            wrong.append(f"{name}: code says {default!r}, docs say {rows.get(name, '-')!r}")
    assert not wrong, "defaults in docs/settings.md differ from app/settings/:\n" + "\n".join(wrong)
