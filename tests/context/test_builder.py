"""The context builder: a constant number of queries whatever the number of channels, memories
bounded in every prompt, the current channel's memory always there, sections broad to narrow."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import event

from app.context.builder import ContextBuilder, Persona, window
from app.context.memories import CHANNEL_MEMORY_LIMIT, MEMORY_BUDGET_CHARS, MEMORY_CHAR_LIMIT
from app.db.engine import create_engine, session_factory, sqlite_reader
from app.db.models import Channel, Memory, Message, Person
from app.domain import ChannelMemory, ChannelMessages, ChatMessage, Context
from app.gate.scopes import Scopes
from app.llm.prompts import render
from tests.conftest import StartTomo, Tomo, judgment_json, next_ts, purpose_of, wait_for
from tests.fakes import FakeModel, FakeSlack

DAY = 86400.0


def ts_at(epoch: float, n: int) -> str:
    return f"{int(epoch)}.{n:06d}"


async def add_channels(tomo: Tomo, first: int, last: int, *, now: float, size: int = 300) -> None:
    """Channels C{first}..C{last}: a few messages each and long memories, the higher the
    number the more recently active."""
    async with tomo.runtime.sessions() as session:
        for n in range(first, last + 1):
            channel = f"C{n}"
            when = now - 3600 + n
            if n > 2:
                session.add(Channel(id=channel, name=f"channel-{n}"))
            for i in range(3):
                session.add(
                    Message(
                        channel=channel,
                        ts=ts_at(when, i + 1),
                        user_id=f"U{n}x{i}",
                        text=f"message {i} in {channel}",
                        created_at=when,
                    )
                )
                session.add(Person(id=f"U{n}x{i}", name=f"person-{n}-{i}"))
            for kind in ("long_term", "short_term"):
                content = f"[{channel} {kind}] " + "x" * size
                session.add(
                    Memory(
                        scope="channel",
                        scope_id=channel,
                        kind=kind,
                        content=content,
                        source_ts=ts_at(when, 3),
                        updated_at=when,
                    )
                )
        await session.commit()


async def test_building_a_context_costs_the_same_queries_for_2_and_30_channels(
    start_tomo: StartTomo, slack: FakeSlack
) -> None:
    """Counted with the conversation's scope (app.gate.scopes: one read of the conversation,
    one of who its people are), which the builder asks for before it reads."""
    slack.add_channel("C1", "general", members=("U1", "U2"))
    async with start_tomo(MIN_WAIT_SECONDS=60) as tomo:
        await wait_for(lambda: known(tomo, 2), what="the directory")
        now = time.time()
        await add_channels(tomo, 1, 2, now=now)
        engine = create_engine(tomo.settings.DATABASE_URL)
        runtime = tomo.runtime
        builder = ContextBuilder(
            persona=Persona("tomo", "a friend"),
            channel_messages_limit=tomo.settings.CHANNEL_MESSAGES_LIMIT,
            thread_memory_days=tomo.settings.THREAD_MEMORY_DAYS,
            active_channel_days=tomo.settings.ACTIVE_CHANNEL_DAYS,
            scopes=Scopes(
                engine=engine,
                slack=runtime.slack,
                identity=runtime.identity,
                learn=lambda people: runtime.directory.learn(channel=None, people=people),
            ),
            reader=sqlite_reader(engine),  # as app.wiring.job_services builds it
        )
        statements: list[str] = []

        def count(*args: Any) -> None:
            statements.append(args[2])

        me = runtime.identity.me()
        for executing in (engine.sync_engine, builder.reader):  # the reader: on SQLite
            if executing is not None:
                event.listen(executing, "before_cursor_execute", count)
        sizes = []
        thread = ts_at(now - 3600 + 1, 1)
        try:
            # Once first: the people of #general are learnt from Slack (a write of theirs).
            async with session_factory(engine)() as session:
                await builder.build(session, channel_id="C1", thread_ts=thread, me=me)
            for first, last in ((None, None), (3, 30)):
                if first is not None and last is not None:
                    await add_channels(tomo, first, last, now=now)
                statements.clear()
                async with session_factory(engine)() as session:
                    context = await builder.build(session, channel_id="C1", thread_ts=thread, me=me)
                sizes.append((len(statements), len(context.channel_memories)))
        finally:
            builder.close()
            await engine.dispose()

    (queries_2, channels_2), (queries_30, channels_30) = sizes
    # The scope's 2, then the builder's 7 (the standing instructions are the 7th).
    assert 0 < queries_2 == queries_30 <= 9, statements
    assert channels_2 == 2
    assert channels_30 == CHANNEL_MEMORY_LIMIT + 1  # the current channel and the 20 latest


async def known(tomo: Tomo, n: int) -> bool:
    return (await tomo.rows("SELECT count(*) AS n FROM channel"))[0]["n"] >= n


async def test_memories_in_a_prompt_are_bounded_and_the_current_channel_always_there(
    start_tomo: StartTomo, model: FakeModel, slack: FakeSlack
) -> None:
    model.responder = lambda r: judgment_json(False) if purpose_of(r) == "judgment" else "hi"
    async with start_tomo(MIN_WAIT_SECONDS=0.2) as tomo:
        await wait_for(lambda: known(tomo, 2), what="the directory")
        now = time.time()
        await add_channels(tomo, 2, 60, now=now, size=5000)
        async with tomo.runtime.sessions() as session:
            # #general is the least recently active, a month ago, yet its memory is shown.
            old = now - 30 * DAY
            for kind in ("long_term", "short_term"):
                content = f"GENERAL {kind} " + "g" * 5000
                source_ts = ts_at(old, 1)
                session.add(Memory(scope="channel", scope_id="C1", kind=kind, content=content,
                                   source_ts=source_ts, updated_at=old))  # fmt: skip
            for n in range(15):
                session.add(Memory(scope="thread", scope_id=f"C1:{ts_at(now - 60, n)}",
                                   kind="summary", content=f"THREAD {n} " + "t" * 5000,
                                   source_ts=ts_at(now - 60, n), updated_at=now))  # fmt: skip
            for kind in ("long_term", "short_term"):
                session.add(Memory(scope="workspace", kind=kind, content="WS " + "w" * 5000,
                                   source_ts=ts_at(now, 0), updated_at=now))  # fmt: skip
            await session.commit()
        await tomo.message("<@UBOT> hello", kind="app_mention")
        await slack.wait_for_posts(1)
        await tomo.message("anyone around?", channel="C2", ts=next_ts())
        await model.wait_for_requests(2)
        await wait_for(lambda: len(model.requests) >= 2, what="the judgment")

    prompts = {purpose_of(r): r["messages"][0]["content"] for r in model.requests}
    stored_chars = 2 * 60 * 5000 + 15 * 5000 + 2 * 5000
    bound = MEMORY_BUDGET_CHARS + 8000  # headings, persona, instructions, a few messages
    for purpose in ("reply", "judgment"):
        assert len(prompts[purpose]) < bound < stored_chars
    reply = prompts["reply"]
    assert "GENERAL long_term " + "g" * (MEMORY_CHAR_LIMIT - 30) in reply
    assert "GENERAL short_term" in reply
    assert "WS w" in reply
    assert reply.count("\n- #") <= CHANNEL_MEMORY_LIMIT + 1
    assert "[C60 long_term]" in reply  # the most recently active first
    assert "[C2 long_term]" not in reply  # the budget ran out before the oldest


def message(ts: str, text: str, *, thread_ts: str = "", author: str = "Alice") -> ChatMessage:
    return ChatMessage(
        ts=ts,
        thread_ts=thread_ts,
        user_id="U1",
        author=author,
        text=text,
        created_at=float(ts),
        from_self=False,
    )


def sample_context(*, memories: bool) -> Context:
    parent = message("1700000000.000001", "the parent")
    reply = message("1700000001.000001", "a reply", thread_ts=parent.ts, author="Bob")
    history = ChannelMessages("C1", "general", (parent,), {parent.ts: (parent, reply)})
    extra: dict[str, Any] = {}
    if memories:
        extra = {
            "workspace_long_term_memory": "WS-LONG",
            "workspace_short_term_memory": "WS-SHORT",
            "channel_memories": {
                "C1": ChannelMemory("C1", "general", "GENERAL-LONG", "GENERAL-SHORT"),
                "C2": ChannelMemory("C2", "random", "RANDOM-LONG", None),
            },
            "thread_memories": {parent.ts: "THREAD-SUMMARY"},
        }
    return Context(
        persona_name="tomo",
        persona_prompt="You are tomo.",
        conversation_history=history,
        now=1700000100.0,
        target_thread_ts=parent.ts,
        **extra,
    )


def test_prompt_sections_go_from_broad_to_narrow() -> None:
    context = sample_context(memories=True)
    for template, last in (
        ("reply.j2", "## Recently in #general"),
        ("judgment.j2", "## To judge: the thread"),
    ):
        prompt = render(template, context=context)
        order = ["You are tomo.", "WS-LONG", "WS-SHORT", "## Channels", "- #general", "- #random",
                 "You are now in #general", "GENERAL-LONG", "GENERAL-SHORT", "RANDOM-LONG",
                 "THREAD-SUMMARY", last]  # fmt: skip
        positions = [prompt.find(part) for part in order]
        assert -1 not in positions, (template, order[positions.index(-1)])
        assert positions == sorted(positions), template


def test_without_memories_only_the_conversation_is_given() -> None:
    prompt = render("judgment.j2", context=sample_context(memories=False))
    assert "## Memory" not in prompt and "## Channels" not in prompt
    assert "## Threads going on" not in prompt
    assert "the parent" in prompt and "a reply" in prompt


@given(total=st.integers(0, 5000), limit=st.integers(1, 1000))
def test_the_channel_window_is_bounded_and_moves_by_whole_blocks(total: int, limit: int) -> None:
    """A prompt shows at most `limit` of a channel's newest messages; the oldest one shown
    stays put as messages arrive, and moves on by whole blocks (a quarter of `limit`)."""
    shown = window(total, limit)
    block = max(1, limit // 4)
    assert min(total, limit - block + 1) <= shown <= min(total, limit)
    start, next_start = total - shown, total + 1 - window(total + 1, limit)
    assert next_start == start or (next_start - start == block and next_start % block == 0)
