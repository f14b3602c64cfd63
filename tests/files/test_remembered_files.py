"""Documents in memories (docs/how-tomo-works.md#files): the memory job reads the documents no
prompt read (here: no judgment runs before it, as in a quiet channel or a joined channel's
history) and remembers them by their text, downloading each once."""

from __future__ import annotations

import json

from tests.conftest import StartTomo, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.files.samples import file_object, hosted, pdf


def memory_prompts(model: FakeModel) -> list[str]:
    return [str(r["messages"][0]["content"]) for r in model.requests if purpose_of(r) == "memory"]


def remember(model: FakeModel) -> None:
    model.responder = lambda request: "a memory" if purpose_of(request) == "memory" else None


async def test_a_document_no_prompt_read_is_read_by_the_memory_job_once(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    remember(model)
    plan = pdf(["Day 1: Kyoto, temples and tofu", "Day 2: Nara, deer park"])
    obj = hosted(slack, file_object("message_file_share_pdf"), plan, "application/pdf")
    log = hosted(
        slack,
        file_object("message_file_share_snippet"),
        b"Traceback: KeyError 'region'\n",
        "text/plain",
    )
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:  # no judgment before the memories
        ts = await tomo.message("the plan for the trip", files=[obj], subtype="file_share")
        parent = await tomo.message("deploy failed again", user="U2")
        await tomo.message("here is the log", files=[log], subtype="file_share", thread_ts=parent)
        await tomo.runtime.memory.run()
        first = memory_prompts(model)
        (row,) = await tomo.rows("SELECT files FROM message WHERE ts = :ts", ts=ts)
        await tomo.message("sounds great", user="U2")
        await tomo.runtime.memory.run()
    channel = [p for p in first if "[memory:channel_short_term]" in p]
    thread = [p for p in first if "[memory:thread_summary]" in p]
    assert channel and "[file: trip-plan.pdf]\n```\nDay 1: Kyoto" in channel[0]
    assert "Day 2: Nara, deer park" in channel[0]
    assert thread and "[file: deploy.log]\n```\nTraceback: KeyError 'region'\n```" in thread[0]
    (stored,) = json.loads(row["files"])
    assert "Day 2: Nara" in stored["text"]
    later = memory_prompts(model)[len(first) :]
    assert any("sounds great" in p and "Day 2: Nara" in p for p in later)  # kept, not re-read
    assert sorted(path for path, _ in slack.file_requests) == [
        "T0001-F0003/download/trip-plan.pdf",
        "T0001-F0004/download/deploy.log",
    ]
