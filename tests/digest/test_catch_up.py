"""Catching up without a command (docs/how-tomo-works.md#digests): "what did I miss in #design
since Monday?" is a mention whose model lists #design's messages with search_messages (an empty
query, the channel, the days) and answers citing their permalinks. The model stand-in scripts
the tool call, then answers from the tool's result as a model would."""

from __future__ import annotations

import re
from typing import Any

from tests.conftest import StartTomo
from tests.digest.helpers import link
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.model_tools import asks_for, tool_call
from tests.tools.workspace import store


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def test_what_did_i_miss_lists_the_channel_and_cites_its_permalinks(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    slack.add_channel("C3", "design")
    call = tool_call("search_messages", {"query": "", "channel": "#design", "days": 4}, id="c1")

    def responder(request: dict[str, Any]) -> Any:
        if not any(m["role"] == "tool" for m in request["messages"]):
            return asks_for(call)
        found = re.findall(r"https://fake\.slack\.test/archives/\S+", tool_results(request)[0])
        return "Since Monday in #design: the new logo was approved (" + ", ".join(found) + ")."

    model.responder = responder
    async with start_tomo(LLM_FUNCTION_CALLING="true", MIN_WAIT_SECONDS=60) as tomo:
        logo = await store(tomo, "C3", "the new logo is approved", ago=2 * 86400)
        colours = await store(tomo, "C3", "colours next week", user="U2", ago=86400)
        old = await store(tomo, "C3", "an old decision", ago=6 * 86400)
        await store(tomo, "C2", "nothing about design", ago=3600)
        await tomo.message("<@UBOT> what did I miss in #design since Monday?")
        (post,) = await slack.wait_for_posts(1, timeout=60)
    (result,) = tool_results(model.requests[-1])
    assert "the new logo is approved" in result and "colours next week" in result
    assert "an old decision" not in result and "nothing about design" not in result
    for ts in (logo, colours):
        assert link("C3", ts).replace("&amp;", "&") in result
        assert link("C3", ts) in str(post["text"])
    assert link("C3", old) not in str(post["text"])
