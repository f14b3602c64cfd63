"""Real Slack payloads end to end (docs/how-tomo-works.md#ingress): every fixture of
tests/fixtures/slack/ goes through the signed endpoint to the real slack-sdk and LiteLLM against the
stand-ins, and each case checks what was stored, judged, posted and put in the prompts."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import StartTomo, Tomo, judgment_json, purpose_of, turns_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.routes.events_corpus import CASES, Case

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "slack"
TS = re.compile(r"^1[6-9]\d{8}\.\d{6}$")
FIXTURE_NOW = 1700000300  # the fixtures' "now": every one of their times is before it


def fixture(name: str) -> dict[str, Any]:
    body = json.loads((FIXTURES / f"{name}.json").read_text())
    assert isinstance(body, dict)
    return body


def shifter(now: float) -> Any:
    """Moves a fixture's times (ts strings, epoch integers) to `now`, keeping their order and
    gaps and their microseconds, so the quiet wait and the age limits see fresh messages."""
    delta = int(now) - FIXTURE_NOW

    def shift(ts: str) -> str:
        seconds, _, micros = ts.partition(".")
        return f"{int(seconds) + delta}.{micros}"

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, str) and TS.match(value):
            return shift(value)
        if isinstance(value, int) and not isinstance(value, bool) and 1.6e9 < value < 1.8e9:
            return value + delta
        return value

    return shift, walk


def answer(request: dict[str, Any]) -> str:
    if purpose_of(request) == "judgment":
        return judgment_json(True, delay=0)
    return "on it!"


async def settle(tomo: Tomo) -> None:
    """Until no judgment or reply is pending or running and no lookup is under way."""

    async def idle() -> bool:
        timers = await tomo.timers("judgment", "reply")
        return (
            not timers and not tomo.memory_timers.running_jobs and not tomo.runtime.directory.busy
        )

    for _ in range(2):  # idle twice, a quiet wait apart
        await wait_for(idle, what="tomo to settle")
        await asyncio.sleep(0.25)


def test_the_corpus_has_forty_shapes_and_every_fixture_is_replayed() -> None:
    names = {path.stem for path in FIXTURES.glob("*.json")}
    sent = {name for case in CASES.values() for name in case.send}
    assert len(names) >= 40
    assert names == sent
    sources = (FIXTURES / "README.md").read_text()
    assert all(f"`{name}`" in sources for name in names), "every fixture names its source"


@pytest.mark.parametrize("name", sorted(CASES))
async def test_payload(
    name: str, start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    case: Case = CASES[name]
    shift, walk = shifter(time.time())
    if case.setup is not None:
        case.setup(slack, shift)
    model.responder = answer
    async with start_tomo(MIN_WAIT_SECONDS=0.1, MAX_REPLY_DELAY_SECONDS=0) as tomo:
        async with tomo.timers_held():  # a case's events all come within the quiet wait
            for fixture_name in case.send:
                response = await tomo.send(walk(fixture(fixture_name)))
                assert response.status_code == 200, response.text
        await settle(tomo)
        rows = {(r["channel"], r["ts"]): r for r in await tomo.rows("SELECT * FROM message")}
        judgments = await tomo.rows("SELECT latest_ts FROM judgment")
    check(case, rows, judgments, slack, model, shift)


def check(
    case: Case,
    rows: dict[tuple[str, str], dict[str, Any]],
    judgments: list[dict[str, Any]],
    slack: FakeSlack,
    model: FakeModel,
    shift: Any,
) -> None:
    if case.row is not None and case.row.deleted:
        # Slack deleted it: its row is deleted too, not only hidden (docs/data-and-privacy.md).
        assert (case.row.channel, shift(case.row.ts)) not in rows
    elif case.row is not None:
        expected = case.row
        row = rows.get((expected.channel, shift(expected.ts)))
        assert row is not None, f"no message stored at {shift(expected.ts)}: {list(rows.values())}"
        if expected.kind is not None:
            assert row["kind"] == expected.kind
        if expected.route is not None:
            assert row["route"] == expected.route
        if expected.thread_ts is not None:
            assert row["thread_ts"] == (shift(expected.thread_ts) if expected.thread_ts else "")
        for part in expected.text_has:
            assert part in row["text"], f"{part!r} not in {row['text']!r}"
        assert not row["deleted"]
        if expected.edited is not None:
            assert (row["edited_at"] is not None) is expected.edited
    for ts in case.absent:
        assert not [key for key in rows if key[1] == shift(ts)], f"{ts} was stored"
    if "stored_in_C2" in case.extra:
        assert len([key for key in rows if key[0] == "C2"]) == case.extra["stored_in_C2"]

    judged = [j["latest_ts"] for j in judgments]
    assert judged == ([shift(case.judged)] if case.judged else [])
    posts = slack.posts()
    if case.posted is None:
        assert posts == []
        assert [purpose_of(r) for r in model.requests if purpose_of(r) == "reply"] == []
    else:
        channel, _, thread = case.posted.partition(" > ")
        assert [(p["channel"], p["thread_ts"]) for p in posts] == [
            (channel, shift(thread) if thread else None)
        ]
        (reply,) = [r for r in model.requests if purpose_of(r) == "reply"]
        last = turns_of(reply)[-1]
        assert last["role"] == "user" and last["content"].strip(), "never an empty turn"
        for part in case.last_turn_has:
            assert part in last["content"], f"{part!r} not in the last turn {last['content']!r}"
    prompts = "\n".join(
        str(message.get("content")) for r in model.requests for message in r["messages"]
    )
    for part in case.prompt_has:
        assert part in prompts, f"{part!r} not in the prompts"
    for part in case.prompt_lacks:
        assert part not in prompts, f"{part!r} in the prompts"
    called = {method for method, _ in slack.calls}
    for method in case.calls:
        assert method in called, f"{method} was not called"
