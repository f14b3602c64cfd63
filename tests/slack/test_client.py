"""Our Slack client wrapper against servers that answer badly."""

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.slack.client import SlackClient, SlackError
from tests.fakes.server import ServerThread


async def gateway_error(_request: Request) -> PlainTextResponse:
    return PlainTextResponse("<html>502 Bad Gateway</html>", status_code=502)


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
