"""The fakes answer the real slack-sdk AsyncWebClient and real LiteLLM over HTTP on 127.0.0.1."""

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import asyncio
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import litellm
import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from tests.fakes import FakeModel, FakeSlack
from tests.fakes._common import WAIT_SECONDS
from tests.fakes.server import ServerThread

MODEL = "openai/gpt-4o-mini"
USER_TURN = [{"role": "user", "content": "hello there tomo"}]

# LiteLLM's types trigger this pydantic warning on first use (third-party, harmless).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item 'summary' on TypedDict class 'ChatCompletionReasoningItem':UserWarning"
)


@pytest.fixture(scope="module")
def slack_server() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def slack(slack_server: FakeSlack) -> FakeSlack:
    slack_server.reset()
    return slack_server


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.url)


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


@pytest.fixture
def model(model_server: FakeModel, litellm_closed: None) -> FakeModel:
    model_server.reset()
    return model_server


async def complete(model: FakeModel, **kwargs: Any) -> Any:
    return await litellm.acompletion(
        model=MODEL, api_base=model.api_base, api_key="sk-test", messages=USER_TURN, **kwargs
    )


def test_server_thread_serves_until_stopped() -> None:
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("pong"))])
    server = ServerThread(app)
    server.start()
    with urllib.request.urlopen(server.base_url + "/", timeout=WAIT_SECONDS) as response:
        assert response.read() == b"pong"
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(server.base_url + "/", timeout=2)


# ----- FakeSlack ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_auth_test(slack: FakeSlack, client: AsyncWebClient) -> None:
    response = await client.auth_test()
    assert response["user_id"] == "UBOT"
    assert response["bot_id"] == "BBOT"
    assert response["team_id"] == "T0001"
    assert slack.calls == [("auth.test", {})]


@pytest.mark.asyncio
async def test_post_message_stores_and_returns_increasing_ts(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_message("C1", ts="9999999999.000001", text="from the future")
    first = await client.chat_postMessage(channel="C1", text="hi")
    second = await client.chat_postMessage(channel="C1", text="in thread", thread_ts=first["ts"])

    assert Decimal(first["ts"]) > Decimal("9999999999.000001")
    assert Decimal(second["ts"]) > Decimal(first["ts"])
    assert second["message"]["thread_ts"] == first["ts"]
    assert slack.posts() == [
        {"channel": "C1", "text": "hi", "thread_ts": None, "ts": first["ts"]},
        {"channel": "C1", "text": "in thread", "thread_ts": first["ts"], "ts": second["ts"]},
    ]
    assert slack.calls_to("chat.postMessage")[1] == {
        "channel": "C1",
        "text": "in thread",
        "thread_ts": first["ts"],
    }
    assert [m["user"] for m in slack.history("C1")[1:]] == ["UBOT", "UBOT"]


@pytest.mark.asyncio
async def test_replies_page_oldest_first_with_parent_on_first_page(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_message("C1", ts="100.000000", text="parent", user="U1")
    for i in range(5, 0, -1):  # stored out of order on purpose
        slack.add_message("C1", ts=f"10{i}.000000", text=f"r{i}", user="U2", thread_ts="100.000000")

    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        response = await client.conversations_replies(
            channel="C1", ts="100.000000", limit=2, cursor=cursor
        )
        pages.append([m["text"] for m in response["messages"]])
        cursor = response["response_metadata"]["next_cursor"]
        assert response["has_more"] is bool(cursor)
        if not cursor:
            break

    assert pages == [["parent", "r1"], ["r2", "r3"], ["r4", "r5"]]
    first = await client.conversations_replies(channel="C1", ts="100.000000")
    parent = first["messages"][0]
    assert (parent["thread_ts"], parent["reply_count"], parent["reply_users"]) == (
        "100.000000",
        5,
        ["U2"],
    )
    assert len(first["messages"]) == 6
    with pytest.raises(SlackApiError) as excinfo:
        await client.conversations_replies(channel="C1", ts="1.000000")
    assert excinfo.value.response["error"] == "thread_not_found"


@pytest.mark.asyncio
async def test_history_pages_newest_first_without_replies(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_channel("C1", "general")
    for i in range(1, 6):
        slack.add_message("C1", ts=f"20{i}.000000", text=f"m{i}", user="U1")
    slack.add_message("C1", ts="210.000000", text="reply", user="U2", thread_ts="201.000000")

    first = await client.conversations_history(channel="C1", limit=3)
    cursor = first["response_metadata"]["next_cursor"]
    second = await client.conversations_history(channel="C1", limit=3, cursor=cursor)
    recent = await client.conversations_history(channel="C1", oldest="203.000000")

    assert [m["text"] for m in first["messages"]] == ["m5", "m4", "m3"]
    assert [m["text"] for m in second["messages"]] == ["m2", "m1"]
    assert second["has_more"] is False
    assert second["messages"][-1]["reply_count"] == 1
    assert [m["text"] for m in recent["messages"]] == ["m5", "m4"]


@pytest.mark.asyncio
async def test_users_conversations_pages_member_channels(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_channel("C1", "general")
    slack.add_channel("C2", "random")
    slack.add_channel("C3", "secret", is_private=True)
    slack.add_channel("C4", "elsewhere", member=False)
    slack.add_channel("D1", "dm", is_im=True, user="U1")

    ids: list[str] = []
    cursor: str | None = None
    while True:
        response = await client.users_conversations(
            types="public_channel,private_channel", limit=2, cursor=cursor
        )
        ids += [c["id"] for c in response["channels"]]
        cursor = response["response_metadata"]["next_cursor"]
        if not cursor:
            break

    assert ids == ["C1", "C2", "C3"]
    assert len(slack.calls_to("users.conversations")) == 2
    info = await client.conversations_info(channel="C3")
    assert info["channel"]["is_private"] is True


@pytest.mark.asyncio
async def test_users_conversations_with_user_lists_that_persons_conversations(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    """`user`: that person's conversations; of the non-public ones, only those the caller is
    in too (Slack's users.conversations reference: "Non-public channels are restricted to
    those where the calling user shares membership")."""
    slack.add_channel("C1", "general", members=("U1", "U2"))
    slack.add_channel("C4", "elsewhere", member=False, members=("U1",))
    slack.add_channel("G1", "secret", is_private=True, members=("U1",))
    slack.add_channel("G2", "theirs", is_private=True, member=False, members=("U1",))
    slack.add_channel("G3", "mpdm-u1--u2-1", is_mpim=True, members=("U1", "U2"))
    slack.add_channel("G4", "bobs", is_private=True, members=("U2",))
    everything = "public_channel,private_channel,mpim"
    alice = await client.users_conversations(user="U1", types=everything)
    private = await client.users_conversations(user="U1", types="private_channel,mpim")
    assert [c["id"] for c in alice["channels"]] == ["C1", "C4", "G1", "G3"]
    assert [c["id"] for c in private["channels"]] == ["G1", "G3"]


@pytest.mark.asyncio
async def test_users_info(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.add_user("U1", name="ana", display_name="Ana", real_name="Ana Lima")

    response = await client.users_info(user="U1")

    assert response["user"]["profile"]["display_name"] == "Ana"
    assert response["user"]["profile"]["real_name"] == "Ana Lima"
    assert response["user"]["is_bot"] is False
    assert response["user"]["deleted"] is False
    with pytest.raises(SlackApiError) as excinfo:
        await client.users_info(user="U404")
    assert excinfo.value.response["error"] == "user_not_found"


@pytest.mark.asyncio
async def test_users_info_bots_deleted_users_and_slackbot(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    """As Slack's user object reference shows them: a bot user carries its bot_id and app,
    a legacy bot user is_bot without them, a deactivated account is `deleted`, and Slackbot
    says is_bot false."""
    slack.add_user("U7", name="legacy", real_name="Legacy bot", is_bot=True)
    slack.add_user("U8", name="gone", display_name="Gone", deleted=True)

    tomo = (await client.users_info(user="UBOT"))["user"]
    legacy = (await client.users_info(user="U7"))["user"]
    gone = (await client.users_info(user="U8"))["user"]
    slackbot = (await client.users_info(user="USLACKBOT"))["user"]
    bot = (await client.bots_info(bot="BBOT"))["bot"]

    assert (tomo["is_bot"], tomo["profile"]["bot_id"], tomo["profile"]["api_app_id"]) == (
        True,
        "BBOT",
        "A1",
    )
    assert legacy["is_bot"] is True and "bot_id" not in legacy["profile"]
    assert gone["deleted"] is True and gone["profile"]["display_name"] == "Gone"
    assert (slackbot["is_bot"], slackbot["profile"]["display_name"]) == (False, "Slackbot")
    assert (bot["app_id"], bot["user_id"], bot["name"]) == ("A1", "UBOT", "tomo")
    with pytest.raises(SlackApiError) as excinfo:
        await client.bots_info(bot="B404")
    assert excinfo.value.response["error"] == "bot_not_found"


@pytest.mark.asyncio
async def test_conversations_info_channels_group_dms_and_dms(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_channel("C1", "general")
    slack.add_channel("G1", "mpdm-ana--bob--tomo-1", is_mpim=True)
    slack.add_channel("D1", "", is_im=True, user="U1")

    general = (await client.conversations_info(channel="C1"))["channel"]
    group = (await client.conversations_info(channel="G1"))["channel"]
    direct = (await client.conversations_info(channel="D1"))["channel"]

    assert (general["name"], general["is_channel"], general["is_private"]) == (
        "general",
        True,
        False,
    )
    assert (group["is_mpim"], group["is_private"]) == (True, True)
    assert direct["is_im"] is True and direct["user"] == "U1" and "name" not in direct
    with pytest.raises(SlackApiError) as excinfo:
        await client.conversations_info(channel="C404")
    assert excinfo.value.response["error"] == "channel_not_found"


@pytest.mark.asyncio
async def test_replies_name_the_parent_user_and_show_a_deleted_parent_as_its_tombstone(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.add_message("C1", ts="100.000000", text="parent", user="U1")
    slack.add_message("C1", ts="101.000000", text="reply", user="U2", thread_ts="100.000000")

    before = (await client.conversations_replies(channel="C1", ts="100.000000"))["messages"]
    slack.delete_parent("C1", "100.000000")
    after = (await client.conversations_replies(channel="C1", ts="100.000000"))["messages"]

    assert before[1]["parent_user_id"] == "U1"
    assert (after[0]["subtype"], after[0]["user"], after[0]["hidden"]) == (
        "tombstone",
        "USLACKBOT",
        True,
    )
    assert after[0]["reply_count"] == 1 and after[1]["text"] == "reply"


@pytest.mark.asyncio
async def test_http_500_raises_then_recovers(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.fail("auth.test", status=500)

    with pytest.raises(SlackApiError) as excinfo:
        await client.auth_test()

    assert excinfo.value.response.status_code == 500
    assert (await client.auth_test())["ok"] is True


@pytest.mark.asyncio
async def test_http_429_carries_retry_after(slack: FakeSlack, client: AsyncWebClient) -> None:
    slack.fail("conversations.replies", status=429, retry_after=1, times=2)

    for _ in range(2):
        with pytest.raises(SlackApiError) as excinfo:
            await client.conversations_replies(channel="C1", ts="1.0")
        assert excinfo.value.response.status_code == 429
        assert excinfo.value.response.headers["Retry-After"] == "1"
        assert excinfo.value.response["error"] == "ratelimited"


@pytest.mark.asyncio
async def test_error_injection_delay_custom_and_unknown_methods(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.fail("chat.postMessage", error="not_in_channel")
    slack.delay("auth.test", 0.2)
    slack.handle("reactions.add", lambda params: {"ok": True, "echo": params["name"]})

    with pytest.raises(SlackApiError) as excinfo:
        await client.chat_postMessage(channel="C1", text="hi")
    started = time.monotonic()
    await client.auth_test()
    elapsed = time.monotonic() - started
    reaction = await client.reactions_add(channel="C1", timestamp="1.0", name="eyes")
    with pytest.raises(SlackApiError) as unknown:
        await client.api_call("nothing.here")

    assert excinfo.value.response["error"] == "not_in_channel"
    assert slack.posts() == []
    assert elapsed >= 0.2
    assert reaction["echo"] == "eyes"
    assert unknown.value.response["error"] == "unknown_method"


@pytest.mark.asyncio
async def test_wait_for_posts(slack: FakeSlack, client: AsyncWebClient) -> None:
    async def post_later() -> None:
        await asyncio.sleep(0.05)
        await client.chat_postMessage(channel="C1", text="late")

    task = asyncio.create_task(post_later())
    posts = await slack.wait_for_posts(1)
    await task

    assert [p["text"] for p in posts] == ["late"]
    with pytest.raises(AssertionError, match=r"waiting for 2 chat\.postMessage posts; got 1"):
        await slack.wait_for_posts(2, timeout=0.05)


# ----- FakeModel ----------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_completion_returns_queued_content_and_usage(model: FakeModel) -> None:
    model.enqueue("first answer", "second")

    response = await complete(model)

    assert response.choices[0].message.content == "first answer"
    assert response.choices[0].finish_reason == "stop"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (3, 2)
    assert response.usage.total_tokens == 5
    assert model.last_request["messages"] == USER_TURN
    assert model.last_request["model"] == "gpt-4o-mini"


@pytest.mark.asyncio
async def test_responder_then_queue_then_default(model: FakeModel) -> None:
    model.default_content = "default"
    model.enqueue("queued")
    model.responder = lambda request: "scripted" if request.get("temperature") == 0 else None

    scripted = await complete(model, temperature=0)
    queued = await complete(model)
    default = await complete(model)

    contents = [r.choices[0].message.content for r in (scripted, queued, default)]
    assert contents == ["scripted", "queued", "default"]
    assert len(model.requests_for(lambda request: request.get("temperature") == 0)) == 1


@pytest.mark.asyncio
async def test_dict_answer_with_tool_calls(model: FakeModel) -> None:
    function = {"name": "remember", "arguments": '{"fact": "x"}'}
    call = {"id": "call_1", "type": "function", "function": function}
    model.enqueue({"content": None, "tool_calls": [call]})

    response = await complete(model)

    assert response.choices[0].finish_reason == "tool_calls"
    assert response.choices[0].message.tool_calls[0].function.name == "remember"


@pytest.mark.asyncio
async def test_http_500_raises_without_retries(model: FakeModel) -> None:
    model.fail(status=500, times=3)

    with pytest.raises(litellm.InternalServerError):
        await complete(model, num_retries=0)

    assert len(model.requests) == 1


@pytest.mark.asyncio
async def test_http_429_is_retried_by_default_honouring_retry_after(model: FakeModel) -> None:
    model.fail(status=429, retry_after=0.05)
    model.enqueue("after the limit")

    response = await complete(model)

    assert response.choices[0].message.content == "after the limit"
    assert len(model.requests) == 2


@pytest.mark.asyncio
async def test_delay_triggers_client_timeout(model: FakeModel) -> None:
    model.delay(0.5)

    with pytest.raises(litellm.Timeout):
        await complete(model, timeout=0.1, num_retries=0)
    response = await complete(model)

    assert response.choices[0].message.content == "ok"


@pytest.mark.asyncio
async def test_a_request_given_up_on_takes_no_queued_answer(model: FakeModel) -> None:
    model.delay(0.3)
    with pytest.raises(litellm.Timeout):
        await complete(model, timeout=0.1, num_retries=0)
    model.enqueue("for the next request")
    await asyncio.sleep(0.5)  # the abandoned request's delay is over meanwhile
    response = await complete(model)
    assert response.choices[0].message.content == "for the next request"


@pytest.mark.asyncio
async def test_a_stream_is_served_as_events_and_the_plain_path_too(model: FakeModel) -> None:
    base = model.api_base.removesuffix("/v1")
    async with httpx.AsyncClient(base_url=base, timeout=WAIT_SECONDS) as http:
        streamed = await http.post("/chat/completions", json={"messages": [], "stream": True})
        served = await http.post("/chat/completions", json={"model": "m", "messages": []})

    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [line for line in streamed.text.split("\n\n") if line]
    assert events[-1] == "data: [DONE]" and all(e.startswith("data: ") for e in events)
    assert served.json()["choices"][0]["message"] == {"role": "assistant", "content": "ok"}
    assert len(await model.wait_for_requests(2)) == 2
    with pytest.raises(AssertionError, match="waiting for 3 chat completion requests"):
        await model.wait_for_requests(3, timeout=0.05)
