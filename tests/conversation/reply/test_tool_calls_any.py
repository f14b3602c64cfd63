"""Whatever a model writes as a tool call, the loop answers it with a result and goes on
(app/conversation/reply/tool_loop.py): a tool runs only with a JSON object holding its required
keys; anything else is an error result, never an exception."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.conversation.reply.tool_loop import ToolLoop
from app.llm.tool_calls import ToolCall
from app.settings import Settings
from app.tools import registry
from app.tools.base import Asker
from app.tools.kit import Kit
from tests.tool_doubles import Broken, Lookup

ASKER = Asker(team_id="T1", channel="C1", thread_ts="1.0", user_id="U1", claim_id=1)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@pytest.fixture(scope="module")
def loop() -> ToolLoop:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(registry.CLASSES, "search_messages", Lookup)
        patch.setitem(registry.CLASSES, "read_thread", Broken)
        settings_ = Settings(  # type: ignore[call-arg]
            _env_file=None, SLACK_SIGNING_SECRET="s", SLACK_BOT_TOKEN="xoxb-t"
        )
        kit = Kit(settings_, *([None] * 5))  # type: ignore[arg-type]
        box = registry.Toolbox(settings_, kit)
    return ToolLoop(llm=None, toolbox=box, max_rounds=4)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(["search_messages", "read_thread", "note", ""]) | st.text(max_size=20),
    arguments=st.text(max_size=80) | JSON.map(json.dumps),
)
def test_any_call_gets_a_result(loop: ToolLoop, name: str, arguments: str) -> None:
    Lookup.asked.clear()
    result = asyncio.run(loop.run_call(ToolCall("call_1", name, arguments), ASKER))
    decoded: Any
    try:
        decoded = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        decoded = None
    runs = name == "search_messages" and isinstance(decoded, dict) and "query" in decoded
    assert result.ok is runs and (result.text.startswith("error: ") is not runs)
    assert len(Lookup.asked) == (1 if runs else 0)
    assert len(result.text) <= 6000
