"""What a channel's digest costs in tokens, on a busy day and a quiet one.

    .venv/bin/python -m bench.digest

A seeded day in #general: 2,000 messages from eight people (a third of them in Japanese) in 60
threads and at the top level, stored in tomo's real schema (Alembic). The digest is built as the
job builds it — the period's messages read by app.digest.messages, the prompts rendered by
app.digest.writer from the templates, in parts of notes when they do not fit one prompt — and
sent through tomo's LiteLLM wrapper with LiteLLM's mock responses standing in for the model:
notes and a digest of a realistic length, citing the numbers they were shown. Printed: the
calls, each prompt's tokens (LiteLLM's counter, gpt-4o-mini's tokenizer) beside tomo's own
estimate, the answers' tokens, and the cost at gpt-4o-mini's prices (LiteLLM's cost map). Last
line: `digest messages=N calls=C prompt_tokens=P completion_tokens=Q max_prompt_tokens=M
cost_usd=X`, for the busy day.
"""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any
from zoneinfo import ZoneInfo

from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head
from app.digest.messages import period_messages
from app.digest.writer import PROMPT_TOKENS, DigestWriter, estimate_tokens
from app.llm import LLM, litellm_module
from app.settings import DEFAULT_PERSONA_PROMPT, Settings
from app.slack.identity import Me
from bench.common import machine
from bench.prompts import count_tokens

CHANNEL = "C0001"
PEOPLE = {f"U000{n}": name for n, name in enumerate("Aiko Ben Chika Dan Emi Finn Gen Hana".split())}
ENGLISH = (
    "the release checklist needs a second reviewer; staging is flaky again; who owns the "
    "migration; lunch at the ramen place; the customer call moved to Thursday; design review "
    "notes are in the doc; can someone look at the failing test; the budget is approved"
).split("; ")
JAPANESE = [
    "リリースのチェックリストにもう一人レビューが必要です",
    "ステージングがまた不安定です",
    "移行の担当はだれですか",
    "お昼はラーメン屋にしましょう",
    "顧客との打ち合わせは木曜に変更になりました",
]


def _fill(db: sqlite3.Connection, messages: int, seed: int, until: float) -> None:
    rng = random.Random(seed)
    db.execute(
        "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, updated_at)"
        " VALUES (?, 'T0001', 'general', 0, 0, 1, 0)",
        (CHANNEL,),
    )
    db.executemany(
        "INSERT INTO person (id, team_id, name, display_name, real_name, is_bot, fetched_at)"
        " VALUES (?, 'T0001', ?, ?, ?, 0, 0)",
        [(uid, name.lower(), name, name) for uid, name in PEOPLE.items()],
    )
    start = until - 86400 + 60
    stamps = sorted(rng.uniform(start, until - 60) for _ in range(messages))
    parents: list[str] = []
    rows = []
    for at in stamps:
        ts = f"{at:.6f}"
        thread = rng.choice(parents[-8:]) if parents and rng.random() < 0.6 else ""
        if not thread and rng.random() < 0.15:
            parents.append(ts)
        said = rng.choice(JAPANESE) if rng.random() < 0.33 else rng.choice(ENGLISH)
        text = " ".join([said] * rng.randint(1, 4))
        rows.append((CHANNEL, ts, thread, thread, rng.choice(list(PEOPLE)), text, at))
    db.executemany(
        "INSERT INTO message (channel, ts, team_id, thread_ts, conversation_ts, route, user_id,"
        " bot_id, text, subtype, kind, channel_type, created_at, edited_at, deleted)"
        " VALUES (?, ?, 'T0001', ?, ?, 'judgment', ?, NULL, ?, NULL, 'conversational',"
        " 'channel', ?, NULL, 0)",
        rows,
    )


def _mock(purpose: str, messages: list[dict[str, Any]]) -> str:
    """A model's answer of a realistic length, citing numbers the prompt showed."""
    content = messages[0]["content"]
    prompt = content if isinstance(content, str) else "".join(p["text"] for p in content)
    shown = [int(n) for n in re.findall(r"\[(\d+)\]", prompt)] or [1]
    bullets = 14 if "Write the digest now." in prompt else 10
    step = max(1, len(shown) // bullets)
    lines = []
    for n in range(bullets):
        cited = shown[min(n * step, len(shown) - 1)]
        lines.append(f"- Open: someone still has to review the release checklist [{cited}]")
    return "**Release**\n" + "\n".join(lines)


async def digest_of(path: Path, messages: int, *, seed: int) -> dict[str, Any]:
    until = time.time()
    engine = create_engine(f"sqlite:///{path}")
    await upgrade_to_head(engine)
    with sqlite3.connect(path) as db:
        _fill(db, messages, seed, until)
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        SLACK_SIGNING_SECRET="bench",
        SLACK_BOT_TOKEN="xoxb-bench",
        LLM_MODEL="openai/gpt-4o-mini",
        LLM_API_KEY="sk-bench",
        LLM_MAX_RETRIES=0,
    )
    llm = LLM(settings)
    llm.mock_response = _mock
    litellm = await litellm_module()
    calls: list[tuple[int, int, int]] = []  # (tokenizer, estimate, answer) per call
    complete = llm.complete

    async def counted(**call: Any) -> Any:
        answer = await complete(**call)
        text = "".join(str(p.get("text", "")) for p in call["messages"][0]["content"])
        said = count_tokens(litellm, [{"role": "assistant", "content": answer.text}])
        calls.append((count_tokens(litellm, call["messages"]), estimate_tokens(text), said))
        return answer

    llm.complete = counted  # type: ignore[method-assign]
    zone = ZoneInfo("Asia/Tokyo")
    writer = DigestWriter(
        llm=llm,
        persona_name="tomo",
        persona_prompt=DEFAULT_PERSONA_PROMPT.format(name="tomo"),
        zone=zone,
    )
    async with engine.connect() as connection:
        period = await period_messages(
            connection,
            channel=CHANNEL,
            since=until - 86400,
            until=until,
            me=Me(user_id="UBOT", bot_id="BBOT"),
            workspace_url="https://bench.slack.com/",
        )
    await writer.write(
        period, channel_name="general", instructions=None, since=until - 86400, until=until
    )
    await engine.dispose()
    return {
        "messages": len(period.messages),
        "conversations": len(period.conversations),
        "calls": calls,
        "cost": _cost(litellm, calls),
    }


def _cost(litellm: ModuleType, calls: list[tuple[int, int, int]]) -> float:
    prompt, completion = litellm.cost_per_token(
        model="gpt-4o-mini",
        prompt_tokens=sum(c[0] for c in calls),
        completion_tokens=sum(c[2] for c in calls),
    )
    return float(prompt + completion)


def report(name: str, day: dict[str, Any]) -> None:
    calls = day["calls"]
    print(
        f"{name}: {day['messages']} messages in {day['conversations']} conversations, "
        f"{len(calls)} model call(s) (budget {PROMPT_TOKENS} tokens a prompt)"
    )
    for n, (tokens, estimate, said) in enumerate(calls, 1):
        kind = "digest" if n == len(calls) else f"notes {n}"
        print(f"  {kind:9} prompt {tokens:6d} tokens (estimated {estimate:6d}), answer {said:4d}")
    print(
        f"  in all: prompt {sum(c[0] for c in calls)} tokens, answers {sum(c[2] for c in calls)}"
        f" tokens, ${day['cost']:.4f} at gpt-4o-mini's prices"
    )


def main() -> None:
    print(machine())
    with tempfile.TemporaryDirectory(prefix="tomo-bench-digest-") as folder:
        quiet = asyncio.run(digest_of(Path(folder) / "quiet.db", 40, seed=3))
        busy = asyncio.run(digest_of(Path(folder) / "busy.db", 2000, seed=7))
    report("a quiet day", quiet)
    report("a busy day", busy)
    calls = busy["calls"]
    print(
        f"digest messages={busy['messages']} calls={len(calls)} "
        f"prompt_tokens={sum(c[0] for c in calls)} completion_tokens={sum(c[2] for c in calls)} "
        f"max_prompt_tokens={max(c[0] for c in calls)} cost_usd={busy['cost']:.4f}"
    )


if __name__ == "__main__":
    main()
