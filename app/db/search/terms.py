"""A search query as the message index takes it: its words, and how each is looked for.

Words are what whitespace separates ("launch date" is two; a "quoted phrase" is one), in any
language: Japanese has no spaces, so "予算会議" is one word and is found inside any longer
text. The index is made of trigrams (three characters in a row), so a word of three
characters or more is looked up in it directly; a word of one or two characters (会議, 予算,
"ok") has no trigram of its own and is found another way (app.db.search.service).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_WORDS = 8  # a query's first words; the rest are left out
MAX_WORD_CHARS = 100
TRIGRAM = 3
# "a phrase in quotes", or a run of anything but whitespace.
_WORDS = re.compile(r'"([^"]+)"|(\S+)')
# Characters no message's words are made of: control characters (NUL included) and lone
# surrogates, which neither database takes.
_UNSEARCHABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class Terms:
    long: tuple[str, ...]  # three characters or more: looked up in the trigram index
    short: tuple[str, ...]  # one or two characters

    @property
    def empty(self) -> bool:
        return not self.long and not self.short

    @property
    def text(self) -> str:
        """The words again, as one string (PostgreSQL's similarity ranks by it)."""
        return " ".join((*self.long, *self.short))


def terms_of(query: str) -> Terms:
    """The words of a query, each once, in order; an empty or blank query has none."""
    words: list[str] = []
    for match in _WORDS.finditer(_UNSEARCHABLE.sub(" ", query)):
        word = (match.group(1) or match.group(2) or "").strip()[:MAX_WORD_CHARS]
        if word and word.lower() not in (w.lower() for w in words):
            words.append(word)
    words = words[:MAX_WORDS]
    return Terms(
        long=tuple(w for w in words if len(w) >= TRIGRAM),
        short=tuple(w for w in words if len(w) < TRIGRAM),
    )


def phrase(word: str) -> str:
    """A word as an FTS5 string: quoted, so that nothing in it is query syntax."""
    return '"' + word.replace('"', '""') + '"'


def any_of(trigrams: list[str]) -> str:
    """An FTS5 query matching any of these trigrams."""
    return "(" + " OR ".join(phrase(t) for t in trigrams) + ")"


def like_pattern(word: str) -> str:
    """`%word%` for LIKE with ESCAPE '\\': the word's own % and _ match only themselves."""
    escaped = word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def prefix_range(word: str) -> tuple[str, str]:
    """The range of index terms (trigrams, lower-cased by the tokenizer) that begin with a
    short word: [word, word + the last code point)."""
    low = word.lower()
    return low, low + "\U0010ffff"
