"""What the text after `/tomo` asks for: a command and its duration (the language to answer in is
app.domain's `language_of`).

Command words are English, each with Japanese aliases (`/tomo 静かに 2時間`). Durations are a
number and a unit, possibly several (`30m`, `2h`, `1h30m`, `3d`, `1.5h`, `2時間`, `3日`), up to
MAX_DURATION_SECONDS. Full-width digits and spaces count like ASCII ones.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum


class Action(StrEnum):
    HELP = "help"
    STATUS = "status"
    QUIET = "quiet"
    MENTIONS_ONLY = "mentions-only"
    NORMAL = "normal"
    MEMORY = "memory"
    FORGET = "forget"
    TOOLS = "tools"
    INSTRUCTIONS = "instructions"
    DIGEST = "digest"
    UNKNOWN = "unknown"


WORDS: dict[str, Action] = {
    **dict.fromkeys(("help", "?", "ヘルプ", "使い方", "つかいかた"), Action.HELP),
    **dict.fromkeys(("status", "状態", "ステータス", "じょうたい"), Action.STATUS),
    **dict.fromkeys(("quiet", "静かに", "しずかに", "静か"), Action.QUIET),
    **dict.fromkeys(
        ("mentions-only", "mentions_only", "mentions", "mention-only", "メンションのみ"),
        Action.MENTIONS_ONLY,
    ),
    **dict.fromkeys(("normal", "通常", "ふつう", "普通"), Action.NORMAL),
    **dict.fromkeys(("memory", "memories", "記憶", "きおく"), Action.MEMORY),
    **dict.fromkeys(("forget", "忘れて", "わすれて", "忘れる"), Action.FORGET),
    **dict.fromkeys(("tools", "tool", "ツール", "道具"), Action.TOOLS),
    **dict.fromkeys(
        ("instructions", "instruction", "指示", "しじ", "インストラクション"), Action.INSTRUCTIONS
    ),
    **dict.fromkeys(("digest", "digests", "まとめ", "ダイジェスト", "要約"), Action.DIGEST),
}
TAKES_ARGUMENT = frozenset({Action.QUIET, Action.TOOLS, Action.INSTRUCTIONS, Action.DIGEST})
# `/tomo instructions clear` (and its Japanese words): the instructions removed.
CLEAR_WORDS = frozenset({"clear", "off", "none", "消去", "クリア", "削除", "解除", "なし"})

MAX_DURATION_SECONDS = 365 * 86400.0
_UNITS: dict[str, float] = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds", "秒"), 1.0),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes", "分"), 60.0),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours", "時間"), 3600.0),
    **dict.fromkeys(("d", "day", "days", "日"), 86400.0),
    **dict.fromkeys(("w", "wk", "week", "weeks", "週", "週間"), 7 * 86400.0),
}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+|秒|分|時間|日|週間|週)")


class BadDuration(ValueError):
    """Not a duration tomo understands; the person gets told how to write one."""


@dataclass(frozen=True)
class Parsed:
    action: Action
    argument: str  # what follows the command word ("" when nothing), normalized
    words: str  # the whole text, as typed (for an unknown command's answer)
    text: str = ""  # what follows the command word, as typed (instructions keep their case)


def normalize(text: str) -> str:
    """Full-width letters, digits and spaces as ASCII; lower case; outer space gone."""
    return unicodedata.normalize("NFKC", text).strip().lower()


def parse_words(text: str) -> Parsed:
    word, *rest = re.split(r"\s+", normalize(text), maxsplit=1)
    argument = rest[0] if rest else ""
    action = WORDS.get(word, Action.UNKNOWN) if word else Action.HELP
    if argument and action not in TAKES_ARGUMENT and action is not Action.HELP:
        action = Action.UNKNOWN  # `/tomo normal please`: say what the commands are
    typed = re.split(r"\s+", text.strip(), maxsplit=1)
    return Parsed(
        action=action,
        argument=argument,
        words=text.strip(),
        text=typed[1].strip() if len(typed) > 1 else "",
    )


def parse_duration(text: str) -> float:
    """Seconds in `text` (`30m`, `2h`, `1h30m`, `1.5 hours`, `3日`); raises BadDuration."""
    clean = normalize(text).replace(" ", "")
    if not clean:
        raise BadDuration("empty")
    total, position = 0.0, 0
    for match in _PART.finditer(clean):
        if match.start() != position or match.group(2) not in _UNITS:
            raise BadDuration(text)
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(clean) or total <= 0 or total > MAX_DURATION_SECONDS:
        raise BadDuration(text)
    return total
