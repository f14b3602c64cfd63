"""Reading what follows `/tomo`: command words (English and Japanese), durations, language."""

from __future__ import annotations

import pytest

from app.commands.words import (
    MAX_DURATION_SECONDS,
    Action,
    BadDuration,
    parse_duration,
    parse_words,
)
from app.domain import is_japanese


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30m", 1800),
        ("2h", 7200),
        ("3d", 3 * 86400),
        ("1w", 7 * 86400),
        ("90s", 90),
        ("0.5s", 0.5),
        ("1.5h", 5400),
        ("1h30m", 5400),
        ("1h 30m", 5400),
        ("2 hours", 7200),
        ("45 minutes", 2700),
        ("2H", 7200),
        ("\uff12\uff48", 7200),  # full-width "2h"
        ("2時間", 7200),
        ("30分", 1800),
        ("3日", 3 * 86400),
        ("1時間30分", 5400),
        ("365d", MAX_DURATION_SECONDS),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "soon", "30", "m", "0m", "0s", "-2h", "2x", "2h please", "h2", "366d", "1e3s"]
)
def test_bad_durations(text: str) -> None:
    with pytest.raises(BadDuration):
        parse_duration(text)


@pytest.mark.parametrize(
    ("text", "action", "argument"),
    [
        ("", Action.HELP, ""),
        ("   ", Action.HELP, ""),
        ("help", Action.HELP, ""),
        ("HELP", Action.HELP, ""),
        ("status", Action.STATUS, ""),
        ("quiet", Action.QUIET, ""),
        ("quiet 2h", Action.QUIET, "2h"),
        ("quiet   1h 30m", Action.QUIET, "1h 30m"),
        ("静かに　2時間", Action.QUIET, "2時間"),
        ("mentions-only", Action.MENTIONS_ONLY, ""),
        ("メンションのみ", Action.MENTIONS_ONLY, ""),
        ("normal", Action.NORMAL, ""),
        ("通常", Action.NORMAL, ""),
        ("memory", Action.MEMORY, ""),
        ("記憶", Action.MEMORY, ""),
        ("forget", Action.FORGET, ""),
        ("忘れて", Action.FORGET, ""),
        ("dance", Action.UNKNOWN, ""),
        ("normal please", Action.UNKNOWN, "please"),
        ("forget everything", Action.UNKNOWN, "everything"),
    ],
)
def test_command_words(text: str, action: Action, argument: str) -> None:
    parsed = parse_words(text)
    assert (parsed.action, parsed.argument) == (action, argument)


def test_the_language_of_the_words() -> None:
    assert is_japanese("静かに 2時間")
    assert is_japanese("ｽﾃｰﾀｽ")  # half-width katakana
    assert not is_japanese("quiet 2h")
    assert parse_words("quiet 2h").words == "quiet 2h"
