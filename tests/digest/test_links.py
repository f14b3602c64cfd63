"""A digest's citations made links (app.digest.links): whatever the model writes, the posted text
links only to the permalinks of the messages it was given, and pings nobody."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from app.digest.links import linked
from app.slack.mrkdwn import format_reply

LINKS = {
    1: "https://acme.slack.com/archives/C1/p1700000000000100",
    2: "https://acme.slack.com/archives/C1/p1700000000000200?thread_ts=1700000000.000100&cid=C1",
}
ALLOWED = {url.replace("&", "&amp;") for url in LINKS.values()}
TOKEN = re.compile(r"<([^<>|]*)(?:\|[^<>]*)?>")


def posted(text: str) -> str:
    body, _kept, _dropped = linked(text, LINKS)
    return "\n".join(format_reply(body))


def test_citations_become_links_and_unknown_numbers_go() -> None:
    body, kept, dropped = linked("Decided: ramen [1][2], open [3] and [1, 7]", LINKS)
    assert kept == 3 and dropped == 2
    assert body == (
        f"Decided: ramen <{LINKS[1]}|[1]><{LINKS[2].replace('&', '&amp;')}|[2]>, open "
        f" and <{LINKS[1]}|[1]>"
    )


def test_links_mentions_and_broadcasts_the_model_wrote_are_only_text() -> None:
    text = posted(
        "see [the doc](https://evil.example/a) <https://evil.example/b|here> <http://x.y> "
        "https://evil.example/c <!channel> <!here> <@U123> [1](https://evil.example/d)"
    )
    assert "evil.example" not in text and "x.y" not in text
    assert "<!channel>" not in text and "<!here>" not in text and "<@U123>" not in text
    assert "the doc" in text and "here" in text and f"<{LINKS[1]}|[1]>" in text


@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.sampled_from(
                [
                    "[1]",
                    "[2]",
                    "[3]",
                    "[1, 2]",
                    "<",
                    ">",
                    "|",
                    "](",
                    "[",
                    "]",
                    "(http://a.b)",
                    "<https://evil.example|x>",
                    "<!channel>",
                    "<@U1>",
                    "https://e.x/y",
                    "*",
                    "_",
                    "`",
                    "```",
                    "\n",
                    "&",
                    "<#C1|c>",
                    "mailto:a@b.c",
                    "[9](https://e.x)",
                ]
            ),
        ),
        max_size=25,
    )
)
def test_whatever_the_model_writes_links_only_to_the_messages_given(pieces: list[str]) -> None:
    text = posted("".join(pieces))
    for target in TOKEN.findall(text):
        assert target in ALLOWED, (target, text)
