"""Function calling through our LiteLLM wrapper (app/llm/client.py, app/llm/tool_calls.py):
real LiteLLM against the model stand-in, which answers in OpenAI's tool-call wire format,
whole and streamed (tests/fakes/model_tools.py); each call recorded under its reply."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.llm.tool_calls import StreamedCalls, ToolCall
from tests.conftest import StartTomo
from tests.fakes import FakeModel
from tests.fakes.model_tools import asks_for, call_deltas, tool_call

ASK = [{"role": "user", "content": "when is the launch, and what did Ben say?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search_messages",
            "description": "Search messages.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]
CALLS = (
    tool_call("search_messages", {"query": "launch 日程"}, id="call_1"),
    tool_call("search_messages", {"query": "Ben"}, id="call_2"),
)
EXPECTED = (
    ToolCall("call_1", "search_messages", '{"query": "launch 日程"}'),
    ToolCall("call_2", "search_messages", '{"query": "Ben"}'),
)


async def test_a_whole_answer_gives_its_tool_calls_and_is_recorded_under_the_reply(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.enqueue(asks_for(*CALLS))
    async with start_tomo() as tomo:
        completion = await tomo.runtime.llm.complete(
            purpose="reply", messages=ASK, tools=TOOLS, reply_id=42
        )
        rows = await tomo.rows("SELECT purpose, reply_id, success, prompt_tokens FROM llm_call")
    assert completion.tool_calls == EXPECTED and completion.text == ""
    assert model.last_request["tools"] == TOOLS and "tool_choice" not in model.last_request
    ((purpose, reply_id, success, prompt_tokens),) = [tuple(r.values()) for r in rows]
    assert (purpose, reply_id, success) == ("reply", 42, True) and prompt_tokens


async def test_a_streamed_answer_gives_its_text_then_its_calls_joined_by_index(
    start_tomo: StartTomo, model: FakeModel
) -> None:
    model.pace.size = 2  # two characters of the arguments in each chunk
    model.enqueue(asks_for(*CALLS, content="Looking."))
    async with start_tomo() as tomo:
        pieces: list[Any] = [
            piece
            async for piece in tomo.runtime.llm.stream(
                purpose="reply", messages=ASK, tools=TOOLS, tool_choice="auto", reply_id=7
            )
        ]
        rows = await tomo.rows("SELECT reply_id, success FROM llm_call")
    text = "".join(p for p in pieces if isinstance(p, str))
    assert text == "Looking." and tuple(p for p in pieces if isinstance(p, ToolCall)) == EXPECTED
    assert all(isinstance(p, ToolCall) for p in pieces[-2:])  # the calls come last, whole
    assert model.last_request["tool_choice"] == "auto"
    assert rows == [{"reply_id": 7, "success": True}]


@given(
    st.lists(
        st.tuples(st.text(max_size=12), st.text(min_size=1, max_size=60)), min_size=1, max_size=4
    ),
    st.integers(min_value=1, max_value=9),
)
def test_streamed_pieces_of_any_calls_join_back_into_the_calls(
    calls: list[tuple[str, str]], size: int
) -> None:
    sent = [
        tool_call(name or "x", arguments, id=f"call_{n}")
        for n, (name, arguments) in enumerate(calls)
    ]
    joined = StreamedCalls()
    for delta in call_deltas(sent, size=size):
        joined.feed(json.loads(json.dumps(delta)))  # as it travels
    assert joined.calls() == tuple(
        ToolCall(f"call_{n}", name or "x", arguments) for n, (name, arguments) in enumerate(calls)
    )
