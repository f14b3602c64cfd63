"""A prompt obeys the rule a tool obeys (docs/tools.md#who-may-see-what): through the signed
endpoint, the reply and judgment prompts of a guest's DM, a DM with a person of another
organisation, a Slack Connect channel and a channel a guest is in recall only what everyone
reading there may see — no workspace memory made of channels they do not read, no other
channel's memory, no workspace note of such a channel — while an ordinary channel's prompt
recalls all of it. The memories and notes are rows as the memory job and the note tool write
them; the people and conversations answer with Slack's fields (tests/fakes/slack_shapes.py)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from app.db.models import Memory, Note
from app.memory.notebook import text_hash
from tests.conftest import StartTomo, Tomo, judgment_json, later_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack
from tests.gate.endpoint import SETTINGS, ask
from tests.gate.test_guests import guests
from tests.gate.test_scope_now import searched

# What each memory and note says, by the conversation it comes from: unique words, in English
# and in Japanese (people's words: the memories are written in the conversation's language).
ENGLISH = {
    "workspace": "zebracorn-roadmap for everyone",
    "C1": "quokkaplan budget in #general",
    "C2": "moonbeam lunch talk in #random",
    "C5": "palette-final in #design",
    "note:C1": "wombatcode is the launch name",
    "note:C5": "the font is Falconsans",
}
JAPANESE = {
    "workspace": "全社ロードマップ共有済み",
    "C1": "予算会議の結論",
    "C2": "ランチの相談",
    "C5": "色見本は確定",
    "note:C1": "打ち上げのコードネームはファルコン",
    "note:C5": "フォントは游ゴシック",
}
LANGUAGES = [pytest.param(ENGLISH, id="English"), pytest.param(JAPANESE, id="Japanese")]


async def remember(tomo: Tomo, said: dict[str, str]) -> None:
    """The workspace's memories and three public channels' (#general, #random, #design), and
    an important note written in #general and one in #design while nobody but members read
    there: the workspace's notes."""
    now = time.time()
    ts = f"{now - 60:.6f}"
    async with tomo.runtime.sessions() as session:
        for kind in ("long_term", "short_term"):
            session.add(Memory(scope="workspace", kind=kind, content=f"{said['workspace']} {kind}",
                               source_ts=ts, updated_at=now))  # fmt: skip
            for channel in ("C1", "C2", "C5"):
                session.add(Memory(scope="channel", scope_id=channel, kind=kind,
                                   content=f"{said[channel]} {kind}", source_ts=ts,
                                   updated_at=now))  # fmt: skip
        for n, channel in enumerate(("C1", "C5"), start=1):
            text = said[f"note:{channel}"]
            session.add(Note(team_id="T0001", conversation=channel, scope="workspace", text=text,
                             text_hash=text_hash(text), importance=5, created_at=now - n,
                             claim_id=900 + n))  # fmt: skip
        await session.commit()


async def reply_prompt(tomo: Tomo, slack: FakeSlack, model: FakeModel, **asked: Any) -> str:
    """The system prompt of the reply to one message (a mention, or a DM)."""
    after = len(model.requests)
    replies = int((await tomo.rows("SELECT count(*) AS n FROM reply"))[0]["n"]) + 1
    await ask(tomo, slack, asked.pop("text", "<@UBOT> what's new?"), replies=replies, **asked)
    prompts = [
        str(r["messages"][0]["content"]) for r in model.requests[after:] if purpose_of(r) == "reply"
    ]
    assert prompts, "no reply prompt"
    return prompts[-1]


def recalled(prompt: str, said: dict[str, str]) -> set[str]:
    """Which of the memories and notes the prompt holds."""
    return {key for key, words in said.items() if words in prompt}


EVERYTHING = {"workspace", "C1", "C2", "C5", "note:C1", "note:C5"}


@pytest.mark.parametrize("said", LANGUAGES)
async def test_a_prompt_recalls_only_what_everyone_reading_there_may_see(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, said: dict[str, str]
) -> None:
    guests(slack)  # Gwen (U5) a guest in #design (C5); Otto (U9) of another organisation
    question = "何か新しいことある?" if said is JAPANESE else "anything new?"
    async with start_tomo(**SETTINGS) as tomo:
        await remember(tomo, said)
        general = await reply_prompt(tomo, slack, model)
        guest_dm = await reply_prompt(
            tomo, slack, model, channel="D5", user="U5", channel_type="im", text=question
        )
        outsider_dm = await reply_prompt(
            tomo, slack, model, channel="D9", user="U9", channel_type="im", text=question
        )
        with_guest = await reply_prompt(tomo, slack, model, channel="C5")
        # #partners (C6) becomes a Slack Connect channel (docs.slack.dev/reference/events/
        # channel_shared).
        slack.add_channel("C6", "partners", members=("U1", "UBOT"), is_ext_shared=True)
        shared = {"type": "channel_shared", "connected_team_id": "E163Q94DX", "channel": "C6"}
        assert (await tomo.event(shared | {"event_ts": later_ts()})).status_code == 200
        connect = await reply_prompt(tomo, slack, model, channel="C6")
    assert recalled(general, said) == EVERYTHING
    # Gwen reads #design only: not the workspace's memory (made of #general and #random too).
    assert recalled(guest_dm, said) == {"C5", "note:C5"}
    assert recalled(outsider_dm, said) == set()
    # Where Gwen reads, the conversation alone: its own memory and its own note.
    assert recalled(with_guest, said) == {"C5", "note:C5"}
    assert recalled(connect, said) == set()


async def test_a_guest_who_reads_every_channel_the_workspace_memory_is_made_of_gets_it(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """A multi-channel guest in #general, #random and #design: every public channel with a
    memory is theirs to read, and so is what the workspace's memory is written from."""
    guests(slack)
    for channel, name in (("C1", "general"), ("C2", "random")):
        slack.add_channel(channel, name, members=("U1", "U5", "UBOT"))
    async with start_tomo(**SETTINGS) as tomo:
        await remember(tomo, ENGLISH)
        guest_dm = await reply_prompt(
            tomo, slack, model, channel="D5", user="U5", channel_type="im", text="what's new?"
        )
    assert recalled(guest_dm, ENGLISH) == EVERYTHING


@pytest.mark.parametrize("said", LANGUAGES)
async def test_a_judgment_where_a_guest_or_another_organisation_reads_recalls_nothing_else(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel, said: dict[str, str]
) -> None:
    guests(slack)
    slack.add_channel("C6", "partners", members=("U1", "UBOT"), is_ext_shared=True)
    model.responder = lambda r: judgment_json(False) if purpose_of(r) == "judgment" else None
    words = "誰か手伝える?" if said is JAPANESE else "can anyone help?"
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        await remember(tomo, said)
        for channel in ("C1", "C5", "C6"):
            await tomo.message(words, channel=channel, ts=later_ts())

        def judged() -> list[str]:
            return [
                str(r["messages"][0]["content"])
                for r in model.requests
                if purpose_of(r) == "judgment"
            ]

        await wait_for(lambda: len(judged()) >= 3, timeout=60, what="three judgments")
    by_channel = {}
    for prompt in judged():
        for channel, name in (("C1", "#general"), ("C5", "#design"), ("C6", "#partners")):
            if f"You are in {name}." in prompt:
                by_channel[channel] = recalled(prompt, said)
    assert by_channel == {
        "C1": EVERYTHING,
        "C5": {"C5", "note:C5"},
        "C6": set(),
    }


async def test_a_guest_cannot_forget_a_workspace_note_they_may_not_see(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    """forget_note goes through the same scope: from Gwen's DM the note of #general is none of
    hers (an id guessed, as ids are shown in prompts elsewhere); the one of #design is."""
    guests(slack)
    async with start_tomo(**SETTINGS) as tomo:
        await remember(tomo, JAPANESE)
        ids = {
            r["conversation"]: r["id"] for r in await tomo.rows("SELECT id, conversation FROM note")
        }
        calls = [("forget_note", {"id": ids["C1"]}), ("forget_note", {"id": ids["C5"]})]
        dm = {"channel": "D5", "user": "U5", "channel_type": "im", "text": "メモを消して"}
        said = await searched(tomo, slack, model, calls, **dm)
        left = await tomo.rows("SELECT conversation FROM note")
    assert said[0].startswith("error: no note") and said[1] == f"note {ids['C5']} removed"
    assert left == [{"conversation": "C1"}]
