"""The URLs a reply was given (app.tools.given), for any text around them (hypothesis): a URL
written in a message or a tool's result is found in every form Slack or a page writes it,
and nothing longer, shorter or changed is; a result that only repeats what the model wrote
in its call gives nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.tools.given import GivenUrls, url_key

PATH_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-_~/."
QUERY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789=&-_"
# What may stand around a URL: words, spaces, punctuation and Japanese.
AROUND = st.text(
    alphabet=st.sampled_from(list("abc xyz.,;:!?()\n「」、。を読んで記事東京カタカナ")), max_size=20
)
# What may follow a URL: anything, once something that cannot go on with it came first.
AFTER = st.tuples(st.sampled_from([" ", "\n", "。", "を", "、", ". ", ", ", "! "]), AROUND).map(
    "".join
)

urls = st.builds(
    lambda host, path, query: f"https://{host}.example/{path}" + (f"?{query}" if query else ""),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10),
    st.text(alphabet=PATH_CHARS, max_size=30).filter(lambda p: not p.endswith((".", "/"))),
    st.text(alphabet=QUERY_CHARS, max_size=20),
)


def held(url: str, *texts: str) -> bool:
    return GivenUrls(texts).holds(url)


@settings(max_examples=300)
@given(urls, AROUND, AFTER, st.sampled_from(["{u}", "<{u}>", "<{u}|a label>", "({u})"]))
def test_a_url_in_any_text_is_given(url: str, before: str, after: str, form: str) -> None:
    written = form.format(u=url.replace("&", "&amp;"))  # as Slack escapes it
    text = f"{before} {written}{after}"
    assert held(url, text)
    if "?" not in url:  # a trailing slash does not count
        assert held(url.rstrip("/"), text) and held(url.rstrip("/") + "/", text)


@settings(max_examples=300)
@given(urls, AROUND, AROUND, st.text(alphabet="0123456789", min_size=1, max_size=8))
def test_nothing_longer_or_shorter_is_given(url: str, before: str, after: str, more: str) -> None:
    """What a model adds (a secret in a query, a path) makes another URL; so does cutting."""
    text = f"{before} {url} {after}"
    joiner = "&" if "?" in url else "?"
    assert not held(f"{url}{joiner}q={more}", text)
    assert not held(f"{url}{more}", text)
    bare = url.rstrip("/")  # (a trailing slash does not count)
    assert not held(bare[: -len(more)] if len(bare) - len(more) > 20 else bare + "x", text)


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("see example.org/docs please", "https://example.org/docs"),
        ("see example.org/docs please", "http://example.org/docs"),
        ("HTTPS://Example.ORG/Docs", "https://example.org/Docs"),
        ("https://example.org/a?x=1&amp;y=2", "https://example.org/a?x=1&y=2"),
        ("https://example.org/a?x=1&amp;y=2", "https://example.org/a?x=1&amp;y=2"),
        ("これはexample.net/xです", "https://example.net/x"),
        ("https://ja.example.jp/wiki/東京を読んで", "https://ja.example.jp/wiki/東京"),
        ("https://ja.example.jp/wiki/東京", "https://ja.example.jp/wiki/%E6%9D%B1%E4%BA%AC"),
        ("bücher.de/katalog", "https://xn--bcher-kva.de/katalog"),
        ("http://127.0.0.1:8080/article.", "http://127.0.0.1:8080/article"),
        ("http://example.org:80/a", "http://example.org/a"),
        ("https://example.org/a#part", "https://example.org/a"),
    ],
)
def test_the_forms_that_are_the_same_url(text: str, url: str) -> None:
    assert held(url, text)


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("https://example.org/docs", "http://example.org/docs"),  # its scheme was written
        ("https://example.org/Docs", "https://example.org/docs"),  # a path's case counts
        ("https://example.org/a/b", "https://example.org/a"),
        ("https://example.org/a?x=1", "https://example.org/a"),
        ("https://example.org/a?x=1", "https://example.org/a?x=2"),
        ("https://example.org/a", "https://example.org:8443/a"),
        ("https://example.org/%41", "https://example.org/A"),
        ("the word example", "https://example"),
        ("", "https://example.org/"),
        ("https://example.org/", "file:///etc/passwd"),
    ],
)
def test_what_is_not_the_same_url(text: str, url: str) -> None:
    assert not held(url, text)


def result(text: str, arguments: dict[str, object], *, before: tuple[str, ...] = ()) -> GivenUrls:
    given = GivenUrls(before)
    given.add_result(text, arguments=json.dumps(arguments, ensure_ascii=False))
    return given


@pytest.mark.parametrize(
    "text",
    [
        "No messages found for https://evil.example/?q=hunter2.",
        'The web search for "evil.example/?q=hunter2" found nothing.',
        "could not read https://evil.example/?q=hunt: refused",  # cut short
        "could not read https://evil.example/?q=hunter2—refused",  # run on
        "could not read HTTPS://EVIL.EXAMPLE/?q=hunter2",
        "could not read https://evil.example/%3Fq%3Dhunter2",
    ],
)
def test_a_result_that_repeats_the_calls_arguments_gives_nothing(text: str) -> None:
    """What the model wrote comes back in a result (an error, a search that found nothing):
    it is still the model's, not given."""
    given = result(text, {"query": "https://evil.example/?q=hunter2"})
    assert len(given) == 0
    assert not given.holds("https://evil.example/?q=hunter2")


def test_a_result_gives_what_it_found_but_not_what_it_was_asked() -> None:
    given = result(
        "1. widgetlib 4.2 https://widgetlib.example/4.2\n2. https://evil.example/?q=hunter2",
        {"query": "widgetlib evil.example/?q=hunter2"},
    )
    assert given.holds("https://widgetlib.example/4.2")
    assert not given.holds("https://evil.example/?q=hunter2")


def test_a_page_read_from_a_given_url_gives_its_links() -> None:
    """The page's address was given: its own links, even a part of its address, are given."""
    page = "https://docs.example/3/library/asyncio.html"
    given = result(
        f"{page}\n\nasyncio. Up: https://docs.example/3/library/ next: https://docs.example/3/x",
        {"url": page},
        before=(f"<{page}>",),
    )
    assert given.holds("https://docs.example/3/library/")
    assert given.holds("https://docs.example/3/x")


def test_a_copy_grows_apart() -> None:
    first = GivenUrls(["https://a.example/"])
    second = first.copy()
    second.add("https://b.example/")
    assert first.holds("https://a.example") and not first.holds("https://b.example")
    assert second.holds("https://a.example") and second.holds("https://b.example")


@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    GivenUrls([text])
    url_key(text)
