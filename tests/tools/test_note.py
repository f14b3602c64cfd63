"""The notebook (`note`, `forget_note`) run as a reply runs them, against tomo's real database:
a note belongs where it was written, a reply run again writes it once, and the notes a
conversation may see enter its judgment and reply prompts."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.tools.note import ForgetNoteTool, NoteTool
from tests.conftest import StartTomo, Tomo, judgment_json, purpose_of
from tests.fakes import FakeModel, FakeSlack
from tests.tools.kit import asker, kit_of


def private_places(slack: FakeSlack) -> None:
    """A private channel and a group DM Alice (U1) is in, and her DM with tomo."""
    slack.add_channel("G1", "secret", is_private=True)
    slack.add_channel("G2", "mpdm-alice--bob-1", is_private=True, is_mpim=True)
    slack.add_channel("D1", "", is_im=True, user="U1")


async def known_channels(tomo: Tomo) -> None:
    """The directory as Slack lists it (tomo learns it at start-up)."""
    rows = await tomo.rows("SELECT id FROM channel")
    assert {"C1", "G1", "D1"} <= {r["id"] for r in rows}, rows


async def write(tomo: Tomo, channel: str, text: str, *, claim: int, **extra: Any) -> str:
    result = await NoteTool(kit_of(tomo)).run(
        {"text": text, **extra}, asker=asker(channel, claim=claim)
    )
    assert result.ok, result.text
    return result.text


def system_prompts(model: FakeModel, purpose: str) -> list[str]:
    return [str(r["messages"][0]["content"]) for r in model.requests if purpose_of(r) == purpose]


async def test_a_note_belongs_where_it_was_written(
    start_tomo: StartTomo, slack: FakeSlack, model: FakeModel
) -> None:
    private_places(slack)
    async with start_tomo(MIN_WAIT_SECONDS=0.3) as tomo:
        await known_channels(tomo)
        said = {
            "C1": await write(tomo, "C1", "Alice's birthday is 3 May", claim=1, importance=4),
            "G1": await write(tomo, "G1", "launch code name is Falcon", claim=2, importance=5),
            "G2": await write(tomo, "G2", "bob and alice plan a surprise", claim=3, importance=5),
            "D1": await write(tomo, "D1", "Alice's mother is ill", claim=4, about=["U1"]),
        }
        rows = await tomo.rows("SELECT id, conversation, scope, about FROM note ORDER BY id")
        # A reply in another public channel, in Alice's DM, and a judgment in #random.
        await tomo.message("<@UBOT> hello", channel="C2", kind="app_mention")
        await slack.wait_for_posts(1)
        await tomo.message("hi tomo", channel="D1", channel_type="im")
        await slack.wait_for_posts(2)
        model.enqueue(judgment_json(False))
        await tomo.message("anyone around?", channel="C2")
        await model.wait_for_requests(3)
        replies = system_prompts(model, "reply")
        judgments = system_prompts(model, "judgment")
    assert [(r["conversation"], r["scope"]) for r in rows] == [
        ("C1", "workspace"),
        ("G1", "conversation"),
        ("G2", "conversation"),
        ("D1", "conversation"),
    ]
    assert rows[3]["about"] == "U1"
    assert "every conversation may see it" in said["C1"]
    assert all("only this conversation" in said[c] for c in ("G1", "G2", "D1"))
    in_public, in_dm = replies
    ids = {r["conversation"]: r["id"] for r in rows}
    for prompt in (in_public, in_dm, judgments[0]):
        assert f"[note {ids['C1']}, importance 4," in prompt
        assert "Alice's birthday is 3 May" in prompt
        # Never the private channel's or the group DM's, not even in a member's DM.
        assert "Falcon" not in prompt and "surprise" not in prompt
    assert "Alice's mother is ill" in in_dm and "about <@U1>" in in_dm
    assert "Alice's mother is ill" not in in_public
    # In the stable part: before the channel's conversation.
    assert in_public.index("## Your notes") < in_public.index("## Recently in #random")


async def test_a_reply_run_again_writes_its_note_once(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        first = await write(tomo, "C1", "Bob  prefers tea", claim=7)
        again = await write(tomo, "C1", "Bob prefers tea", claim=7)
        other = await write(tomo, "C1", "Bob prefers tea", claim=8)
        rows = await tomo.rows("SELECT id, claim_id FROM note ORDER BY id")
    assert first.startswith("noted") and again.startswith("already noted")
    assert first.split(";")[0].removeprefix("noted") == again.split(";")[0].removeprefix(
        "already noted"
    )
    assert [r["claim_id"] for r in rows] == [7, 8]
    assert other.startswith("noted")


async def test_forget_note_removes_only_what_this_conversation_may_see(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    private_places(slack)
    async with start_tomo() as tomo:
        await known_channels(tomo)
        await write(tomo, "C1", "public fact", claim=1)
        await write(tomo, "G1", "private fact", claim=2)
        ids = {r["text"]: r["id"] for r in await tomo.rows("SELECT id, text FROM note")}
        forget = ForgetNoteTool(kit_of(tomo))
        from_public = await forget.run({"id": ids["private fact"]}, asker=asker("C2"))
        from_dm = await forget.run({"id": ids["private fact"]}, asker=asker("D1"))
        unknown = await forget.run({"id": 999999}, asker=asker("G1"))
        bad = await forget.run({"id": "one"}, asker=asker("G1"))
        kept = await tomo.rows("SELECT text FROM note ORDER BY id")
        # The workspace's note may go from anywhere; the private one from its channel.
        public_gone = await forget.run({"id": ids["public fact"]}, asker=asker("D1"))
        private_gone = await forget.run({"id": str(ids["private fact"])}, asker=asker("G1"))
        left = await tomo.rows("SELECT text FROM note")
    for result in (from_public, from_dm, unknown, bad):
        assert not result.ok and result.text.startswith("error:")
    assert [r["text"] for r in kept] == ["public fact", "private fact"]
    assert public_gone.ok and private_gone.ok
    assert left == []


BAD_ARGUMENTS = [
    {},
    {"text": "   "},
    {"text": "x" * 501},
    {"text": "ok", "importance": 0},
    {"text": "ok", "importance": 6},
    {"text": "ok", "importance": "high"},
    {"text": "ok", "importance": True},
    {"text": "ok", "about": "U1"},
    {"text": "ok", "about": ["<!channel>"]},
    {"text": "ok", "about": [f"U{n:04d}" for n in range(11)]},
]


async def test_bad_arguments_get_an_error_and_write_nothing(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        tool = NoteTool(kit_of(tomo))
        results = [await tool.run(a, asker=asker("C1")) for a in BAD_ARGUMENTS]
        rows = await tomo.rows("SELECT id FROM note")
    assert all(not r.ok and r.text.startswith("error:") for r in results)
    assert rows == []


async def test_an_id_no_note_can_have_is_no_such_note(start_tomo: StartTomo) -> None:
    """Numbers past a 64-bit INTEGER (SQLite's; PostgreSQL's is 32-bit) and digits int() refuses
    are tried on every run: hypothesis found the first one once."""
    ids: list[Any] = [2**63, -(2**63) - 1, 2**31, -(2**31) - 1, str(2**63), "²", "9" * 5000]
    async with start_tomo() as tomo:
        forget = ForgetNoteTool(kit_of(tomo))
        results = [await forget.run({"id": i}, asker=asker("C1")) for i in ids]
    assert [r.ok for r in results] == [False] * len(ids)
    no_note = [f"error: no note {i} here" for i in ids[:5]]
    assert [r.text[: len(said)] for r, said in zip(results, no_note, strict=False)] == no_note
    assert [r.text for r in results[5:]] == ["error: id is a note's number"] * 2


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


async def test_any_arguments_give_a_result_never_an_exception(start_tomo: StartTomo) -> None:
    async with start_tomo() as tomo:
        tool, forget = NoteTool(kit_of(tomo)), ForgetNoteTool(kit_of(tomo))

        @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
        @given(
            st.fixed_dictionaries(
                {}, optional={"text": JSON, "importance": JSON, "about": JSON, "id": JSON}
            )
        )
        def any_call(arguments: dict[str, Any]) -> None:
            calls.append(arguments)

        calls: list[dict[str, Any]] = []
        any_call()
        for claim, arguments in enumerate(calls, start=100):
            for result in (
                await tool.run(arguments, asker=asker("C1", claim=claim)),
                await forget.run(arguments, asker=asker("C1", claim=claim)),
            ):
                assert result.text and len(result.text) <= 6000
                assert result.ok or result.text.startswith("error:")
        notes = await tomo.rows("SELECT text, importance FROM note")
    assert len(calls) == 40
    assert all(1 <= n["importance"] <= 5 and n["text"].strip() for n in notes)
