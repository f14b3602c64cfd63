"""The reply that goes on after an approval obeys who may see what (docs/tools.md#who-may-see-
what) as the reply that asked did: in a Slack Connect channel neither prompt recalls the
workspace's memory, another channel's memory or a workspace note of another channel."""

from __future__ import annotations

import pytest

from tests.conftest import StartTomo, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.fakes.mcp_server import FakeMcp
from tests.fakes.response_url import FakeResponseUrl
from tests.gate.test_prompts import LANGUAGES, recalled, remember
from tests.tools.mcp.approving import approval_id_of, click, wait_state
from tests.tools.mcp.helpers import settings
from tests.tools.mcp.test_approvals import asked, script

pytestmark = pytest.mark.usefixtures("tracker")


@pytest.mark.parametrize("said", LANGUAGES)
async def test_the_reply_after_an_approval_recalls_only_what_the_channel_may_see(
    start_tomo: StartTomo,
    slack: FakeSlack,
    model: FakeModel,
    tracker: FakeMcp,
    hooks: FakeResponseUrl,
    said: dict[str, str],
) -> None:
    # #general is a Slack Connect channel (docs.slack.dev/reference/objects/conversation-object:
    # is_ext_shared), known so from tomo's start.
    slack.add_channel("C1", "general", is_ext_shared=True)
    script(model, "Done: PROJ-8 is filed.")
    tracker.answer("create_issue", "Created PROJ-8")
    async with start_tomo(**settings(tracker.url)) as tomo:
        await remember(tomo, said)
        card = await asked(tomo, slack)
        await click(tomo, card, approve=True, response_url=hooks.new_url(kind="actions"))
        await wait_state(tomo, approval_id_of(card), "done")
    prompts = [str(r["messages"][0]["content"]) for r in model.requests if purpose_of(r) == "reply"]
    assert len(prompts) == 3  # the call asked for, the answer that it waits, the reply after it
    assert slack.posts()[-1]["text"] == "Done: PROJ-8 is filed."
    # Its own memory and its own note only.
    assert [recalled(p, said) for p in prompts] == [{"C1", "note:C1"}] * 3
