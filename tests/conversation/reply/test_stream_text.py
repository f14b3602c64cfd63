"""The model's text made safe to stream piece by piece (app.conversation.reply.stream_text)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.conversation.reply.stream_text import SafeText, split_for_stream
from app.slack.mrkdwn import ZWSP, neutralize_broadcasts

PINGS = ["<!channel>", "<!here>", "<!everyone>", "<!subteam^S0614TZR7>", "<!here|@here>"]
# What Slack turns into a ping: the special mentions (with or without a label) and the words.
BROADCAST = re.compile(
    r"<!(?:channel|here|everyone|subteam\^[^<>|]*)(?:\|[^<>]*)?>"
    r"|(?<![A-Za-z0-9._%+-])@(?:channel|here|everyone)\b"
)


def streamed(pieces: list[str]) -> list[str]:
    safe = SafeText()
    return [safe.feed(piece) for piece in pieces] + [safe.flush()]


def test_a_ping_cut_in_two_is_held_back_until_whole_then_defused() -> None:
    out = streamed(["Hi <!chan", "nel> there"])
    assert out[0] == "Hi "  # nothing of the token yet
    assert "".join(out) == f"Hi @{ZWSP}channel there"


def test_a_broadcast_word_cut_in_two_is_held_back() -> None:
    out = streamed(["ping @he", "re now"])
    assert out[0] == "ping "
    assert "".join(out) == f"ping @{ZWSP}here now"


def test_user_mentions_links_and_plain_less_than_pass() -> None:
    text = "ask <@U123>, see <https://example.com|docs>; 1 < 2\nok"
    assert "".join(streamed([text[:9], text[9:30], text[30:]])) == text


def test_a_lone_less_than_is_released_at_the_end_of_its_line() -> None:
    out = streamed(["a < b", " and more\nnext"])
    assert out == ["a ", "< b and more\nnext", ""]


@settings(deadline=None, max_examples=300)
@given(
    words=st.lists(
        st.sampled_from([*PINGS, "@here", "@everyone", "@channel", "<@U1>", "a", " ", "\n", "<"])
        | st.text(alphabet="ab <>!@|^\n", max_size=6),
        max_size=20,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=12),
)
def test_however_the_text_is_cut_no_ping_is_ever_released(
    words: list[str], cuts: list[int]
) -> None:
    text = "".join(words)
    points = sorted({min(c, len(text)) for c in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    out = streamed(pieces)
    for released in out:
        assert not BROADCAST.search(released), (pieces, out)
    joined = "".join(out)
    assert not BROADCAST.search(joined), (pieces, joined)
    # Nothing lost, nothing added: what a posted reply would say, but for invisible spaces.
    assert joined.replace(ZWSP, "") == neutralize_broadcasts(text).replace(ZWSP, "")


@settings(deadline=None)
@given(text=st.text(alphabet="ab \n", max_size=400), limit=st.integers(min_value=16, max_value=80))
def test_a_cut_message_fits_and_keeps_every_word(text: str, limit: int) -> None:
    head, rest = split_for_stream(text, limit=limit)
    assert len(head) <= limit
    assert (head + " " + rest).split() == text.split()
