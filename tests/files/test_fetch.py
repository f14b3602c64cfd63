"""Where the bot token may go (app.files.fetch): Slack's file host for Slack's own Web API, the
API's own host for a stand-in or a proxy, and nowhere else, however a URL is dressed up."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain import SharedFile
from app.files.fetch import Fetcher, Unreadable, file_hosts
from tests.fakes import FakeSlack


@pytest.fixture
async def slack_fetcher() -> AsyncIterator[Fetcher]:
    fetcher = Fetcher(token="xoxb-t", api_url="https://slack.com/api/", max_bytes=10, timeout=1)
    yield fetcher
    await fetcher.close()


def test_each_web_api_has_its_file_host() -> None:
    assert file_hosts("https://slack.com/api/") == {("https", "files.slack.com", 443)}
    assert file_hosts("https://acme.enterprise.slack.com/api/") == {
        ("https", "files.slack.com", 443)
    }
    assert file_hosts("https://slack-gov.com/api/") == {("https", "files.slack-gov.com", 443)}
    assert file_hosts("http://127.0.0.1:8123/api/") == {("http", "127.0.0.1", 8123)}


@pytest.mark.parametrize(
    "url",
    [
        "https://files.slack.com/files-pri/T1-F1/download/a.png",
        "https://FILES.slack.com:443/files-pri/T1-F1/a.png",
        "https://someone@files.slack.com/files-pri/T1-F1/a.png",
    ],
)
async def test_slacks_file_host_gets_the_token(slack_fetcher: Fetcher, url: str) -> None:
    assert slack_fetcher.allowed(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://files.slack.com/files-pri/T1-F1/a.png",  # not over plain HTTP
        "https://files.slack.com:8443/files-pri/T1-F1/a.png",
        "https://files.slack.com.evil.example/a.png",
        "https://files.slack.com@evil.example/a.png",
        "https://evil.example/files.slack.com/a.png",
        "https://slack.com/files-pri/T1-F1/a.png",
        "https://files.slack.com./a.png",
        "https://files.slack.com:99999/a.png",
        "ftp://files.slack.com/a.png",
        "//files.slack.com/a.png",
        "files.slack.com/a.png",
        "",
    ],
)
async def test_no_other_host_gets_the_token(slack_fetcher: Fetcher, url: str) -> None:
    assert not slack_fetcher.allowed(url)


URL_PIECES = st.sampled_from(
    [
        "files.slack.com",
        "evil.example",
        "slack.com",
        "@",
        ":",
        ":443",
        "/",
        "\\",
        "#",
        "?",
        ".",
        "%40",
        "%2e",
        " ",
        "\t",
        "。",
        "files",
        "https://",
        "http://",
        "//",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(URL_PIECES, max_size=8).map("".join))
async def test_the_token_goes_only_where_httpx_would_send_it_on_slacks_host(tail: str) -> None:
    """Our host check and httpx's own parsing (what sends the request) agree: whatever a URL
    is made of, one we allow goes to https://files.slack.com."""
    fetcher = Fetcher(token="xoxb-t", api_url="https://slack.com/api/", max_bytes=10, timeout=1)
    try:
        for url in (f"https://{tail}", f"https://evil.example{tail}", tail):
            if not fetcher.allowed(url):
                continue
            try:
                target = httpx.URL(url)
            except httpx.InvalidURL:
                continue  # never sent at all
            assert (target.scheme, target.host, target.port) in (
                ("https", "files.slack.com", None),
                ("https", "files.slack.com", 443),
            ), url
    finally:
        await fetcher.close()


async def test_a_file_larger_than_its_size_said_is_not_taken(slack: FakeSlack) -> None:
    """Slack's `size` said it fits, or said nothing: what arrives decides, and over the limit
    the file is not taken."""
    url = slack.host_file(
        "T0001-F0009/download/dump.log", b"x" * 300_000, content_type="text/plain"
    )
    fetcher = Fetcher(token="xoxb-test-token", api_url=slack.url, max_bytes=100_000, timeout=5)
    try:
        for size in (1000, None):
            file = SharedFile(
                id="F0009", name="dump.log", mimetype="text/plain", size=size, url=url
            )
            with pytest.raises(Unreadable, match="over MAX_FILE_MB"):
                await fetcher.fetch(file)
        small = slack.host_file("T0001-F0010/download/ok.log", b"fine\n", content_type="text/plain")
        assert await fetcher.fetch(SharedFile(id="F0010", name="ok.log", url=small)) == b"fine\n"
    finally:
        await fetcher.close()
