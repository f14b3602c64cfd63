"""What a busy day in one channel costs in prompts, and how much of it a provider can cache.

    .venv/bin/python -m bench.prompts

A seeded day in #general: four people, 96 messages in 24 bursts (one an hour, at the top level
or in a thread of an earlier message), a judgment after each burst, a reply by tomo after most
of them, after half of those a follow-up (the asker answers tomo within a minute, and that
is judged as a follow-up, seconds later), and the channel's and workspace's memories
rewritten every six hours. Each prompt is
built the way the jobs build it, from tomo's real schema (Alembic), context builder and
templates, at the moment the job would run, and sent through tomo's LiteLLM wrapper to the
model stand-in (bench/standins.py, in a process of its own, answering at once). Printed per
purpose:
the calls, their prompt tokens (LiteLLM's token counter, gpt-4o-mini's tokenizer), and the
share of each prompt's text it has in common from the start with the previous prompt of the
same channel (judgments) or the same conversation (replies): the part a provider that caches
prefixes bills at its cached price. Each reply is measured a second time as it goes out with
the tools offered (`reply+tools`: the definitions of the tools this build registers, in
app.tools.registry's fixed order, which a provider reads before the messages). The day is run
twice: as it is, and with standing instructions set for the channel (`/tomo instructions`,
INSTRUCTIONS below), which sit in every prompt's stable start. Last lines:
`prompts judgment_shared=X.XX reply_shared=Y.YY reply_tools_shared=Z.ZZ judgment_max_tokens=N`,
then the same as `prompts_with_instructions ...`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from app.context.builder import ContextBuilder, Persona
from app.conversation.reply.prompt import Turns, reply_messages
from app.db.engine import create_engine, session_factory
from app.db.migrate import upgrade_to_head
from app.llm import LLM, litellm_module, system_message
from app.llm.prompts import render_parts
from app.settings import DEFAULT_PERSONA_PROMPT, KNOWN_TOOLS, Settings
from app.slack.identity import Me
from app.tools.registry import OFFERS, class_definitions
from bench.common import PublicScopes, free_port, machine, median, running, uvicorn, wait_ready

# Every tool a reply may be offered (the notebook's name offers two), in their fixed order.
EVERY_TOOL = tuple(offered for name in KNOWN_TOOLS for offered in OFFERS.get(name, (name,)))

CHANNEL = "C0001"
PEOPLE = {"U0001": "Aiko", "U0002": "Ben", "U0003": "Chika", "U0004": "Dan"}
BURSTS, PER_BURST = 24, 4
REPLIES = 21  # bursts tomo answers
MEMORY_EVERY = 6  # bursts between memory rewrites
FOLLOW_UPS = 0.5  # share of tomo's replies the asker answers (a follow-up judgment)
WORDS = "lunch deploy review ramen release meeting bug coffee plan weekend rain design".split()
INSTRUCTIONS = (
    "This is the team's main channel. Be brief and warm, answer in the language people write "
    "in, join conversations about lunch and coffee freely but stay out of release discussions "
    "unless someone asks you. Never use more than one emoji."
)


@dataclass
class Day:
    """The prompts of the day, in order, by purpose and by the conversation they belong to."""

    litellm: ModuleType
    llm: LLM
    answered: dict[str, int] = field(default_factory=dict)
    follow_ups: list[int] = field(default_factory=list)  # which judgments (by position)
    prompts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (key, text)
    tokens: dict[str, list[int]] = field(default_factory=dict)

    async def add(
        self,
        purpose: str,
        key: str,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        measured_as: str | None = None,
    ) -> None:
        await self.llm.complete(purpose=purpose, messages=messages, tools=tools)
        measured_as = measured_as or purpose
        self.answered[measured_as] = self.answered.get(measured_as, 0) + 1
        text = "\n".join(f"[{m['role']}]\n{_text(m['content'])}" for m in messages)
        if tools:
            text = f"[tools]\n{json.dumps(tools, ensure_ascii=False)}\n{text}"
        self.prompts.setdefault(measured_as, []).append((key, text))
        self.tokens.setdefault(measured_as, []).append(count_tokens(self.litellm, messages, tools))

    def shared(self, purpose: str) -> list[float]:
        """For each prompt after the first of its key: the share of its text from the start
        that the previous prompt of the same key had too."""
        last: dict[str, str] = {}
        shares = []
        for key, text in self.prompts.get(purpose, []):
            before = last.get(key)
            if before is not None:
                shares.append(common_prefix(before, text) / len(text))
            last[key] = text
        return shares


def count_tokens(
    litellm: ModuleType, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> int:
    """The prompt's tokens by gpt-4o-mini's tokenizer. tomo turns LiteLLM's counter off (it
    reads the provider's figures: app.llm.client); it is turned on for the count alone."""
    litellm.disable_token_counter = False
    try:
        return int(litellm.token_counter(model="gpt-4o-mini", messages=messages, tools=tools))
    finally:
        litellm.disable_token_counter = True


def _text(content: Any) -> str:
    """A message's text, whether one string or text parts (app.llm.system_message)."""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)


def common_prefix(a: str, b: str) -> int:
    """How many characters `a` and `b` have in common from the start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _insert(db: sqlite3.Connection, ts: float, user: str | None, text: str, thread: str) -> str:
    stamp = f"{ts:.6f}"
    db.execute(
        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, user_id,"
        " bot_id, text, subtype, kind, channel_type, created_at, edited_at, deleted)"
        " VALUES (?, ?, 'T0001', ?, ?, 'judgment', ?, ?, ?, NULL, 'conversational', 'channel',"
        " ?, NULL, 0)",
        (
            CHANNEL,
            stamp,
            thread,
            thread,
            user or "UBOT",
            "BBOT" if user is None else None,
            text,
            ts,
        ),
    )
    return stamp


def _remember(db: sqlite3.Connection, hour: int, now: float, newest: str) -> None:
    """The memories as a memory pass would leave them after `hour` hours of the day."""
    topics = ", ".join(WORDS[(hour + n) % len(WORDS)] for n in range(4))
    rows = [
        ("workspace", "", "long_term", f"The team has talked for months about {topics}. " * 12),
        ("workspace", "", "short_term", f"Today (hour {hour}) the talk was of {topics}. " * 6),
        ("channel", CHANNEL, "long_term", f"#general is where {topics} get discussed. " * 12),
        ("channel", CHANNEL, "short_term", f"In the last hours: {topics}, hour {hour}. " * 6),
    ]
    for scope, scope_id, kind, content in rows:
        db.execute(
            "INSERT INTO memory (scope, scope_id, kind, content, source_ts, updated_at, model)"
            " VALUES (?, ?, ?, ?, ?, ?, 'bench') ON CONFLICT (scope, scope_id, kind) DO UPDATE"
            " SET content = excluded.content, source_ts = excluded.source_ts,"
            " updated_at = excluded.updated_at",
            (scope, scope_id, kind, content, newest, now),
        )


async def replay(path: Path, seed: int, *, model_url: str, instructions: str | None = None) -> Day:
    engine = create_engine(f"sqlite:///{path}")
    await upgrade_to_head(engine)
    sessions = session_factory(engine)
    builder = ContextBuilder(
        persona=Persona("tomo", DEFAULT_PERSONA_PROMPT.format(name="tomo")),
        channel_messages_limit=50,
        thread_memory_days=7,
        active_channel_days=7,
        scopes=PublicScopes(),
    )
    me = Me(user_id="UBOT", bot_id="BBOT")
    tools = class_definitions(EVERY_TOOL)
    rng = random.Random(seed)
    talk = random.Random(seed + 1)  # the follow-ups' own, so the rest of the day stays the same
    values: dict[str, Any] = {
        "SLACK_SIGNING_SECRET": "bench",
        "SLACK_BOT_TOKEN": "xoxb-bench",
        "LLM_MODEL": "openai/gpt-4o-mini",
        "LLM_API_BASE": model_url,
        "LLM_API_KEY": "sk-bench",
        "LLM_MAX_RETRIES": 0,
    }
    settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
    day = Day(await litellm_module(), LLM(settings))
    start = 1_790_000_000.0
    answered = set(rng.sample(range(BURSTS), REPLIES))
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, updated_at)"
            " VALUES (?, 'T0001', 'general', 0, 0, 1, ?)",
            (CHANNEL, start),
        )
        db.executemany(
            "INSERT INTO person (id, team_id, name, display_name, real_name, is_bot, fetched_at)"
            " VALUES (?, 'T0001', ?, ?, ?, 0, ?)",
            [(uid, name.lower(), name, name, start) for uid, name in PEOPLE.items()],
        )
        if instructions:  # as /tomo instructions stores them (app.context.instructions)
            db.execute(
                "INSERT INTO channel_control (channel, mode, changed_by, changed_at,"
                " forgotten_by, instructions, instructions_by, instructions_at)"
                " VALUES (?, 'normal', '', 0, '', ?, 'U0001', ?)",
                (CHANNEL, instructions, start),
            )
    tops: list[str] = []
    asker = ""
    for burst in range(BURSTS):
        now = start + burst * 3600
        thread = rng.choice(tops[-4:]) if tops and rng.random() < 0.5 else ""
        with sqlite3.connect(path) as db:
            if burst % MEMORY_EVERY == 0:
                _remember(db, burst, now, f"{now:.6f}")
            for n in range(PER_BURST):
                now += rng.uniform(20, 90)
                words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 18)))
                user = rng.choice(list(PEOPLE))
                asker = user if n == 0 else asker
                ts = _insert(db, now, user, f"{words}?" if n == 0 else words, thread)
                if not thread and n == 0:
                    tops.append(ts)
        now += 300  # the quiet wait
        async with sessions() as session:
            context = await builder.build(
                session, channel_id=CHANNEL, thread_ts=thread, me=me, now=now
            )
        prompt = render_parts("judgment.j2", context=context, follow_up=False)
        await day.add("judgment", CHANNEL, [system_message(prompt)])
        if burst not in answered:
            continue
        now += 30
        async with sessions() as session:
            context = await builder.build(
                session, channel_id=CHANNEL, thread_ts=thread, me=me, now=now
            )
        trigger = context.target_turns()[-1]
        messages = reply_messages(context, Turns(trigger.ts, 20, threaded=bool(thread)))
        await day.add("reply", thread or CHANNEL, messages)
        if tools:
            await day.add(
                "reply", thread or CHANNEL, messages, tools=tools, measured_as="reply+tools"
            )
        with sqlite3.connect(path) as db:
            _insert(
                db,
                now + 5,
                None,
                "そうだね、" + " ".join(rng.choice(WORDS) for _ in range(8)),
                thread,
            )
        if talk.random() >= FOLLOW_UPS:
            continue
        # A follow-up: the asker answers tomo, judged FOLLOW_UP_WAIT_SECONDS later.
        now += 5 + talk.uniform(10, 60)
        with sqlite3.connect(path) as db:
            words = " ".join(talk.choice(WORDS) for _ in range(talk.randint(3, 10)))
            _insert(db, now, asker, f"and {words}?", thread)
        now += 5
        async with sessions() as session:
            context = await builder.build(
                session, channel_id=CHANNEL, thread_ts=thread, me=me, now=now
            )
        prompt = render_parts("judgment.j2", context=context, follow_up=True)
        await day.add("judgment", CHANNEL, [system_message(prompt)])
        day.follow_ups.append(len(day.prompts["judgment"]) - 1)
    await engine.dispose()
    return day


def main() -> None:
    print(machine())
    with tempfile.TemporaryDirectory(prefix="tomo-bench-prompts-") as folder:
        port = free_port()
        environment = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        standins = uvicorn("bench.standins:app", port=port, env=environment)
        with running(standins):
            wait_ready(standins, f"http://127.0.0.1:{port}/api/auth.test")
            model_url = f"http://127.0.0.1:{port}/v1"
            plain = asyncio.run(replay(Path(folder) / "day.db", seed=7, model_url=model_url))
            instructed = asyncio.run(
                replay(
                    Path(folder) / "instructed.db",
                    seed=7,
                    model_url=model_url,
                    instructions=INSTRUCTIONS,
                )
            )
    names = [t["function"]["name"] for t in class_definitions(EVERY_TOOL)]
    print(f"tools offered with replies: {', '.join(names) or 'none in this build'}")
    report(plain, "prompts")
    print(f"with standing instructions set ({len(INSTRUCTIONS)} characters):")
    report(instructed, "prompts_with_instructions")


def report(day: Day, name: str) -> None:
    # Every judgment is of the one channel: the n-th share is that of the (n+1)-th prompt.
    judged = day.shared("judgment")
    of_follow_ups = [judged[n - 1] for n in day.follow_ups if n > 0]
    print(
        f"follow-up judgments: {len(day.follow_ups)} of {day.answered.get('judgment', 0)}, "
        f"shared from the start with the judgment before: median {median(of_follow_ups):.0%}"
    )
    summary: dict[str, Any] = {}
    for purpose in ("judgment", "reply", "reply+tools"):
        tokens, shared = day.tokens.get(purpose, []), day.shared(purpose)
        summary[purpose] = (median(shared) if shared else 0.0, max(tokens, default=0))
        of = "channel" if purpose == "judgment" else "conversation"
        print(
            f"{purpose:11} {day.answered.get(purpose, 0):3d} calls answered, prompt tokens: "
            f"{sum(tokens)} in all, median "
            f"{median(tokens) if tokens else 0:.0f}, max {max(tokens, default=0)}; shared from "
            f"the start with the previous of its {of}: median {summary[purpose][0]:.0%} "
            f"over {len(shared)} pairs"
        )
    print(
        f"{name} judgment_shared={summary['judgment'][0]:.2f} "
        f"reply_shared={summary['reply'][0]:.2f} "
        f"reply_tools_shared={summary['reply+tools'][0]:.2f} "
        f"judgment_max_tokens={summary['judgment'][1]}"
    )


if __name__ == "__main__":
    main()
