"""Our Slack client wrapper against servers that answer badly: every shape slack-sdk fails in
becomes our SlackError, which says whether Slack may have done the call all the same."""

import socket
from collections.abc import AsyncIterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from app.slack.web.client import SlackClient, SlackError
from tests.fakes import FakeSlack
from tests.fakes.server import ServerThread

THREAD = "1700000000.000100"


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/"


async def gateway_error(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("<html>502 Bad Gateway</html>", status_code=502)


@pytest.fixture
async def client(slack: FakeSlack) -> AsyncIterator[SlackClient]:
    slack.add_message("C1", ts=THREAD, text="hello", user="U1")
    # A generous timeout: a busy machine answers late, and only the test of a late answer wants
    # one (its own client).
    client = SlackClient(token="xoxb-test", base_url=slack.url, timeout=30.0)
    yield client
    await client.close()


async def post(client: SlackClient, text: str = "hi") -> str:
    return await client.post_message(channel="C1", text=text, thread_ts=THREAD)


async def test_a_non_json_error_body_becomes_our_error() -> None:
    server = ServerThread(
        Starlette(routes=[Route("/api/{method}", gateway_error, methods=["GET", "POST"])])
    )
    server.start()
    client = SlackClient(token="xoxb-test", base_url=f"{server.base_url}/api/")
    try:
        with pytest.raises(SlackError) as raised:
            await client.auth_test()
    finally:
        await client.close()
        server.stop()
    assert raised.value.method == "auth.test"
    assert "502" in raised.value.error
    assert raised.value.uncertain  # a 5xx: Slack may have done it


async def test_calls_share_their_connections_and_close_them_with_the_client() -> None:
    """A reply's several calls go over one kept-open connection (one TLS handshake with Slack,
    not one per call), whatever each call's retry policy; `close` closes it."""
    clients: list[tuple[str, int]] = []

    # Each method's answer as Slack's reference shows it (api.slack.com/methods/
    # chat.postMessage, conversations.replies, reactions.add), trimmed to the fields read.
    answers = {
        "chat.postMessage": {
            "ok": True,
            "channel": "C1",
            "ts": "1700000000.000200",
            "message": {"type": "message", "text": "one", "ts": "1700000000.000200"},
        },
        "conversations.replies": {
            "ok": True,
            "messages": [{"type": "message", "user": "U1", "text": "hello", "ts": THREAD}],
            "has_more": False,
        },
        "reactions.add": {"ok": True},
    }

    async def answer(request: Request) -> JSONResponse:
        assert request.client is not None
        clients.append((request.client.host, request.client.port))
        return JSONResponse(answers[request.path_params["method"]])

    server = ServerThread(
        Starlette(routes=[Route("/api/{method}", answer, methods=["GET", "POST"])])
    )
    server.start()
    client = SlackClient(token="xoxb-test", base_url=f"{server.base_url}/api/")
    try:
        await client.post_message(channel="C1", text="one", thread_ts=THREAD)  # a post
        await client.thread_messages(channel="C1", thread_ts=THREAD, limit=5)  # a read
        await client.add_reaction(channel="C1", ts=THREAD, name="eyes")  # a sign
        await client.post_message(channel="C1", text="two", thread_ts=THREAD)
        assert len(clients) == 4 and len(set(clients)) == 1, clients
        await client.close()
        await client.post_message(channel="C1", text="after close", thread_ts=THREAD)
        assert len(clients) == 5 and clients[-1] != clients[0]  # a new session, a new one
    finally:
        await client.close()
        server.stop()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b'{"ok": true, "channel": "C1", "ts": "17', "application/json"),  # cut short
        (b"<html><body>upstream reset</body></html>", "text/html"),
        (b"ok", "text/plain"),
        (b"", "application/json"),
        (b"{}", "application/json"),
        (b'["ok"]', "application/json"),
        (b'{"ok": true}', "application/json"),  # no ts: we cannot know what was posted
    ],
)
async def test_a_post_answered_200_with_an_unreadable_body_is_uncertain_and_not_retried(
    slack: FakeSlack, client: SlackClient, body: bytes, content_type: str
) -> None:
    slack.garble("chat.postMessage", body=body, content_type=content_type)
    with pytest.raises(SlackError) as raised:
        await post(client)
    assert raised.value.uncertain and raised.value.method == "chat.postMessage"
    assert len(slack.calls_to("chat.postMessage")) == 1 and len(slack.posts()) == 1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_a_post_accepted_then_answered_5xx_is_uncertain_and_not_retried(
    slack: FakeSlack, client: SlackClient, status: int
) -> None:
    slack.fail("chat.postMessage", status=status, accept=True)
    with pytest.raises(SlackError) as raised:
        await post(client)
    assert raised.value.uncertain and str(status) in raised.value.error
    assert len(slack.calls_to("chat.postMessage")) == 1 and len(slack.posts()) == 1


async def test_a_post_answered_too_late_is_uncertain(slack: FakeSlack, client: SlackClient) -> None:
    slack.hang("chat.postMessage", 1.5, accept=True)
    impatient = SlackClient(token="xoxb-test", base_url=slack.url, timeout=0.5)
    try:
        with pytest.raises(SlackError) as raised:
            await post(impatient)
    finally:
        await impatient.close()
    assert raised.value.uncertain and "timed out" in raised.value.error
    assert len(slack.calls_to("chat.postMessage")) == 1 and len(slack.posts()) == 1


@pytest.mark.parametrize("code", ["internal_error", "fatal_error"])
async def test_slacks_own_internal_errors_are_uncertain(
    slack: FakeSlack, client: SlackClient, code: str
) -> None:
    slack.fail("chat.postMessage", error=code)
    with pytest.raises(SlackError) as raised:
        await post(client)
    assert raised.value.uncertain and code in raised.value.error


async def test_a_post_slack_refused_is_certain(slack: FakeSlack, client: SlackClient) -> None:
    slack.fail("chat.postMessage", error="not_in_channel")
    with pytest.raises(SlackError) as raised:
        await post(client)
    assert not raised.value.uncertain and raised.value.error == "not_in_channel"
    slack.fail("chat.postMessage", status=400)
    with pytest.raises(SlackError) as raised:
        await post(client)
    assert not raised.value.uncertain and not raised.value.rate_limited
    assert slack.posts() == []


async def test_no_connection_at_all_is_certain() -> None:
    client = SlackClient(token="xoxb-test", base_url=closed_port_url(), timeout=0.5)
    try:
        with pytest.raises(SlackError) as raised:
            await post(client)
    finally:
        await client.close()
    assert not raised.value.uncertain and "connect" in raised.value.error


async def test_a_429_on_a_post_waits_and_posts_once(slack: FakeSlack, client: SlackClient) -> None:
    slack.fail("chat.postMessage", status=429, retry_after=0)
    ts = await post(client, "after the limit")
    assert len(slack.calls_to("chat.postMessage")) == 2
    assert [p["ts"] for p in slack.posts()] == [ts]


async def test_reads_are_retried_after_a_server_error(
    slack: FakeSlack, client: SlackClient
) -> None:
    slack.fail("conversations.replies", status=500)
    messages = await client.thread_messages(channel="C1", thread_ts=THREAD, limit=5)
    assert [m["ts"] for m in messages] == [THREAD]
    assert len(slack.calls_to("conversations.replies")) == 2


async def test_a_read_with_an_unreadable_body_raises_our_error(
    slack: FakeSlack, client: SlackClient
) -> None:
    slack.garble("conversations.replies", body=b"<html>oops", content_type="text/html")
    with pytest.raises(SlackError) as raised:
        await client.thread_messages(channel="C1", thread_ts=THREAD, limit=5)
    assert raised.value.method == "conversations.replies"


async def test_own_posts_are_found_by_their_metadata(slack: FakeSlack, client: SlackClient) -> None:
    mine = {"event_type": "tomo_reply", "event_payload": {"claim": 7, "chunk": 0}}
    other = {"event_type": "something_else", "event_payload": {"claim": 7}}
    first = await client.post_message(channel="C1", text="a", thread_ts=THREAD, metadata=mine)
    await client.post_message(channel="C1", text="b", thread_ts=THREAD, metadata=other)
    await client.post_message(channel="C1", text="c", thread_ts=THREAD)
    top = await client.post_message(channel="C1", text="d", thread_ts=None, metadata=mine)

    found = await client.posts_with_metadata(
        channel="C1", thread_ts=THREAD, after_ts=THREAD, event_type="tomo_reply"
    )
    at_top = await client.posts_with_metadata(
        channel="C1", thread_ts="", after_ts=THREAD, event_type="tomo_reply"
    )
    assert [(m["ts"], m["metadata"]) for m in found] == [(first, mine)]
    assert [m["ts"] for m in at_top] == [top]
    (call,) = [c for c in slack.calls_to("conversations.replies")]
    assert call["include_all_metadata"] in ("1", "true", True)
    # Without asking, Slack leaves metadata out.
    plain = await client.thread_messages(channel="C1", thread_ts=THREAD, limit=10)
    assert all("metadata" not in m for m in plain)


async def test_reactions_and_thread_status(slack: FakeSlack, client: SlackClient) -> None:
    await client.add_reaction(channel="C1", ts=THREAD, name="eyes")
    await client.add_reaction(channel="C1", ts=THREAD, name="eyes")  # already there: fine
    assert slack.reactions("C1", THREAD) == ["eyes"]
    await client.remove_reaction(channel="C1", ts=THREAD, name="eyes")
    await client.remove_reaction(channel="C1", ts=THREAD, name="eyes")  # gone already: fine
    assert slack.reactions("C1", THREAD) == []

    await client.set_thread_status(channel="C1", thread_ts=THREAD, status="is thinking…")
    assert slack.thread_status("C1", THREAD) == "is thinking…"
    await post(client)  # Slack clears the status when the app posts in the thread
    assert slack.thread_status("C1", THREAD) == ""

    slack.fail("reactions.add", error="missing_scope")
    with pytest.raises(SlackError) as raised:
        await client.add_reaction(channel="C1", ts=THREAD, name="eyes")
    assert raised.value.error == "missing_scope"
