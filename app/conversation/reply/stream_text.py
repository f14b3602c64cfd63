"""The model's text made safe to stream, piece by piece (docs/how-tomo-works.md#streaming).

A ping can arrive split across pieces (`<!chan` then `nel>`, `@he` then `re`): a filter that
looked at one piece at a time would let it through. What could still become a Slack token or
a broadcast word is held back until it is complete (or clearly is not one); everything released
is defused as a posted reply is (app.slack.mrkdwn.neutralize_broadcasts).

Slack's streaming methods take Markdown (`markdown_text`) and render it themselves, so the
text keeps the model's Markdown rather than being converted to mrkdwn as a posted reply is.
"""

from __future__ import annotations

import re

from app.slack.mrkdwn import neutralize_broadcasts

# An unfinished Slack token at the end: `<` with no `>` yet (a token never spans a line; past
# this length it is plain text).
_OPEN_TOKEN = re.compile(r"<[^<>\n]{0,120}$")
_OPEN_WORD = re.compile(r"@[A-Za-z0-9_]*$")  # `@here` being written
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")


class SafeText:
    """Feed the model's pieces in; get back what may be streamed now."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + _CONTROL.sub("", piece)
        cut = len(text)
        if token := _OPEN_TOKEN.search(text):
            cut = token.start()
        if word := _OPEN_WORD.search(text, 0, cut):
            cut = min(cut, word.start())
        self._held = text[cut:]
        return neutralize_broadcasts(text[:cut])

    def flush(self) -> str:
        """What was held back, once the model has finished."""
        text, self._held = self._held, ""
        return neutralize_broadcasts(text)


def split_for_stream(text: str, *, limit: int) -> tuple[str, str]:
    """`text` cut where a message of at most `limit` characters may end: at the last line
    break, else the last space, within the limit (a hard cut when there is neither)."""
    if len(text) <= limit:
        return text, ""
    for separator in ("\n", " "):
        at = text.rfind(separator, limit // 2, limit)
        if at > 0:
            return text[:at], text[at:].lstrip(separator)
    return text[:limit], text[limit:]
