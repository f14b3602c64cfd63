"""Permalinks as Slack's chat.getPermalink gives them (its reference's example answers:
`https://ghostbusters.slack.com/archives/C1H9RESGA/p135854651500008` for a message, and
`…/archives/C1H9RESGL/p135854651700023?thread_ts=1358546515.000008&cid=C1H9RESGL` for a
reply in a thread: a ts's ten digits and six decimals, one of which that example drops), built
from auth.test's `url` and read back from any string."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.slack.permalinks import Linked, parse_permalink, permalink

WORKSPACE = "https://ghostbusters.slack.com/"


def test_a_message_and_a_thread_reply_link_as_slack_links_them() -> None:
    assert (
        permalink(WORKSPACE, channel="C1H9RESGA", ts="1358546515.000008")
        == "https://ghostbusters.slack.com/archives/C1H9RESGA/p1358546515000008"
    )
    assert (
        permalink(
            "https://ghostbusters.slack.com",  # without its slash, the same
            channel="C1H9RESGL",
            ts="1358546517.000023",
            thread_ts="1358546515.000008",
        )
        == "https://ghostbusters.slack.com/archives/C1H9RESGL/p1358546517000023"
        "?thread_ts=1358546515.000008&cid=C1H9RESGL"
    )
    # A thread's parent is linked as a message of the channel.
    parent = permalink(
        WORKSPACE, channel="C1", ts="1358546515.000008", thread_ts="1358546515.000008"
    )
    assert "?" not in parent


def test_slacks_own_links_are_read_back() -> None:
    assert parse_permalink(
        "https://ghostbusters.slack.com/archives/C1H9RESGL/p1358546517000023"
        "?thread_ts=1358546515.000008&cid=C1H9RESGL"
    ) == Linked(channel="C1H9RESGL", ts="1358546517.000023", thread_ts="1358546515.000008")
    assert parse_permalink(
        "<https://ghostbusters.slack.com/archives/C1H9RESGA/p1358546515000008|this message>"
    ) == Linked(channel="C1H9RESGA", ts="1358546515.000008")
    for wrong in (
        "",
        "C1/p1358546515000008",
        "ftp://x.slack.com/archives/C1/p1358546515000008",
        "https://x.slack.com/archives/C1/p13585",  # too few digits
        "https://x.slack.com/archives/C1/p99999999999000000",  # not a time Slack stamped
        "https://x.slack.com/archives/C!/p1358546515000008",
        "https://[::1/archives/C1/p1358546515000008",
        None,
        12,
    ):
        assert parse_permalink(wrong) is None, wrong


stamps = st.builds(
    lambda seconds, micros: f"{seconds}.{micros:06d}",
    st.integers(1_000_000_000, 1_700_000_000),
    st.integers(0, 999_999),
)


@given(channel=st.from_regex(r"[CDG][A-Z0-9]{2,12}", fullmatch=True), ts=stamps, parent=stamps)
def test_every_link_built_is_read_back(channel: str, ts: str, parent: str) -> None:
    assert parse_permalink(permalink(WORKSPACE, channel=channel, ts=ts)) == Linked(channel, ts)
    linked = parse_permalink(permalink(WORKSPACE, channel=channel, ts=ts, thread_ts=parent))
    assert linked == Linked(channel, ts, "" if parent == ts else parent)


@given(st.text() | st.binary().map(lambda b: b.decode("latin-1")))
def test_any_string_is_read_without_an_error(value: str) -> None:
    found = parse_permalink(value)
    assert found is None or isinstance(found, Linked)


@given(st.text(alphabet=st.characters(), max_size=40))
def test_any_tail_after_a_link_is_read_without_an_error(tail: str) -> None:
    found = parse_permalink(f"https://x.slack.com/archives/C1/p1358546515000008{tail}")
    assert found is None or found.channel == "C1"
