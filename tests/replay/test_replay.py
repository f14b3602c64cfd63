"""`python -m app.replay`: a conversation through tomo's own code, time compressed, Slack never
contacted; offline with LiteLLM's mock responses, or against a model (here the FakeModel)."""

from __future__ import annotations

import inspect
import io
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.replay.cli import OFFLINE_LABEL, offline_reason, replay
from app.replay.conversation import ReplayError, parse_conversation
from app.replay.slack import ReplaySlack
from app.settings import Settings
from app.slack.web.client import SlackClient
from tests.conftest import judgment_json, purpose_of
from tests.fakes import FakeModel, FakeSlack

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = PROJECT_ROOT / "examples"
SPEED = 200.0  # the examples' 17 minutes in about 5 s: tomo's own seconds stay small beside them


@pytest.fixture
def no_internet(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every connection to an address outside 127.0.0.0/8 fails, and is noted."""
    attempts: list[Any] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def outside(address: Any) -> bool:
        if not isinstance(address, tuple):
            return False  # a Unix socket
        return not (str(address[0]).startswith("127.") or address[0] in ("::1", "localhost"))

    def connect(self: socket.socket, address: Any) -> None:
        if outside(address):
            attempts.append(address)
            raise OSError("no internet in this test")
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if outside(address):
            attempts.append(address)
            return 101  # ENETUNREACH
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield attempts


def replay_settings(slack: FakeSlack, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "SLACK_SIGNING_SECRET": "unused",
        "SLACK_BOT_TOKEN": "xoxb-unused",
        "SLACK_API_URL": slack.url,  # the replay must not use it
        "LLM_MODEL": "openai/gpt-4o-mini",
        "LLM_MAX_RETRIES": 0,
        "MIN_WAIT_SECONDS": 300,
        "JITTER_RATIO": 0,
    }
    return Settings(_env_file=None, **(values | overrides))  # type: ignore[call-arg]


def entries(output: str) -> list[tuple[str, str]]:
    """(where, what) of each timeline line."""
    found = []
    for line in output.splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2 and parts[0].startswith("+") and parts[0][1:2].isdigit():
            where, _, what = parts[1].partition("  ")
            found.append((where.strip(), what.strip()))
    return found


async def test_offline_replay_of_the_english_example(
    slack: FakeSlack, model: FakeModel, no_internet: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lines = parse_conversation((EXAMPLES / "standup.en.jsonl").read_text())
    out = io.StringIO()
    summary = await replay(lines, settings=replay_settings(slack), speed=SPEED, out=out)
    output = out.getvalue()
    timeline = entries(output)

    assert f"{OFFLINE_LABEL} (no LLM_API_BASE or LLM_API_KEY, and OPENAI_API_KEY" in output
    assert ("#general", "carol: hmm, I don't see one. where exactly?") not in timeline
    assert ("#general > figma", "carol: hmm, I don't see one. where exactly?") in timeline
    assert ("#general", "timer set: judgment in 5:00") in timeline
    assert ("#general", "timer reset: judgment in 5:00") in timeline  # bob's message
    assert ("#general", "timer cancelled: judgment") in timeline  # the question moved to a thread
    silent = [e for e in timeline if e[1].startswith("judgment: stay silent")]
    spoke = [e for e in timeline if e[1].startswith("judgment: respond")]
    assert [where for where, _ in silent] == ["#general"]
    assert spoke == [
        (
            "#general > figma",
            "judgment: respond (confidence 0.80, delay 0:30): "
            "offline mock: a question nobody has answered yet",
        )
    ]
    assert ("#general > figma", "timer set: reply in 0:30 (judgment)") in timeline
    assert ("#random > lunch", "timer set: reply now (mention)") in timeline
    # Follow-ups: carol's question after tomo's answer, and alice's thanks after its reply to
    # dave's mention, are judged 5 s after they were written, as the conversation's own.
    follow_ups = [e for e in timeline if e[1].startswith("follow-up judgment: ")]
    assert follow_ups == [
        (
            "#general > figma",
            "follow-up judgment: respond (confidence 0.80): "
            "offline mock: a question nobody has answered yet",
        ),
        (
            "#random > lunch",
            "follow-up judgment: stay silent (confidence 0.60): "
            "offline mock: no question in the latest message, so tomo stays quiet",
        ),
    ]
    assert ("#general > figma", "timer set: judgment in 0:05 (follow_up)") in timeline
    assert ("#random > lunch", "timer set: judgment in 0:05 (follow_up)") in timeline
    assert ("#general > figma", "timer set: reply now (follow_up)") in timeline
    posts = [e for e in timeline if e[1].startswith("tomo: ")]
    # The follow-up's reply in figma and the mention's in lunch are due together: either first.
    assert sorted(where for where, _ in posts) == ["#general > figma"] * 2 + ["#random > lunch"]
    assert all("(offline mock reply)" in what for _, what in posts)
    order = [what for _, what in timeline]
    assert order.index(spoke[0][1]) < order.index("timer set: reply in 0:30 (judgment)")
    assert (summary.judgments, summary.responded, summary.replies) == (4, 2, 3)
    assert summary.llm_calls == 7 and summary.finished
    assert "4 judgments (2 to respond), 3 replies posted; 7 LLM calls" in output
    assert model.requests == [] and slack.calls == [] and no_internet == []


async def test_replay_against_a_model_shows_its_judgment_and_reply(
    slack: FakeSlack, model: FakeModel, no_internet: list[Any]
) -> None:
    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) == "judgment":
            return judgment_json(True, delay=45, reason="Kim asked about the build and waits")
        return "Try `make clean` first, then **rebuild**."

    model.responder = responder
    lines = parse_conversation(
        '{"at": 0, "channel": "dev", "user": "kim", "text": "why is the build red again"}\n'
        '{"at": "1:00", "channel": "dev", "user": "lee", "text": "no idea"}\n'
    )
    settings = replay_settings(
        slack,
        LLM_MODEL="openai/fake-model",
        LLM_API_BASE=model.api_base,
        LLM_API_KEY="sk-fake",
        MIN_WAIT_SECONDS=120,
    )
    out = io.StringIO()
    summary = await replay(lines, settings=settings, speed=SPEED, out=out)
    output = out.getvalue()
    timeline = entries(output)

    assert OFFLINE_LABEL not in output
    assert f"model: openai/fake-model (judgment: openai/fake-model) via {model.api_base}" in output
    assert timeline[-3:] == [
        (
            "#dev",
            "judgment: respond (confidence 0.90, delay 0:45): Kim asked about the build and waits",
        ),
        ("#dev", "timer set: reply in 0:45 (judgment)"),
        ("#dev", "tomo: Try `make clean` first, then *rebuild*."),  # as Slack mrkdwn
    ]
    assert [purpose_of(r) for r in model.requests] == ["judgment", "reply"]
    judged = model.requests[0]["messages"][0]["content"]
    assert "no idea" in judged and "why is the build red again" in judged
    assert (summary.judgments, summary.replies, summary.llm_calls) == (1, 1, 2)
    assert summary.tokens > 0
    assert slack.calls == [] and no_internet == []


async def test_mock_is_forced_even_with_a_model_configured(
    slack: FakeSlack, model: FakeModel
) -> None:
    lines = parse_conversation('{"at": 0, "channel": "c", "user": "a", "text": "@tomo hi?"}')
    settings = replay_settings(slack, LLM_API_BASE=model.api_base, LLM_API_KEY="sk-fake")
    out = io.StringIO()
    summary = await replay(lines, settings=settings, speed=SPEED, mock=True, out=out)
    assert f"{OFFLINE_LABEL} (--mock)" in out.getvalue()
    assert summary.replies == 1 and model.requests == []


async def test_offline_is_chosen_only_without_a_key_or_api_base(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert await offline_reason(replay_settings(slack)) is not None
    assert await offline_reason(replay_settings(slack, LLM_API_BASE="http://127.0.0.1:1")) is None
    assert await offline_reason(replay_settings(slack, LLM_API_KEY="sk-x")) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-provider-variable")
    assert await offline_reason(replay_settings(slack)) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"at": 0, "channel": "c", "user": "a"', "line 1: not JSON"),
        ('{"channel": "c", "user": "a", "text": "x"}', "line 1: `at`"),
        ('{"at": "soon", "channel": "c", "user": "a", "text": "x"}', "not a time offset"),
        ('{"at": 0, "channel": "c", "user": "", "text": "x"}', "`user` must be"),
        ('{"at": 0, "channel": "c", "user": "a", "text": "x", "thread": "t"}', "no earlier line"),
        (
            '{"at": 5, "channel": "c", "user": "a", "text": "x"}\n\n'
            '{"at": 4, "channel": "c", "user": "a", "text": "y"}',
            "line 3: `at` goes back in time",
        ),
        ('{"at": 0, "channel": "c", "user": "a", "text": "x", "channel_type": "x"}', "unknown"),
        ("# only a comment\n", "no message"),
        ("[1, 2]", "line 1: each line must be a JSON object"),
    ],
)
def test_bad_input_is_refused_naming_the_line(text: str, message: str) -> None:
    with pytest.raises(ReplayError, match=message):
        parse_conversation(text)


def test_offsets_threads_and_ids_are_read() -> None:
    lines = parse_conversation(
        '{"at": "1:05", "channel": "#dev", "user": "a", "text": "q", "id": "q1"}\n'
        '{"at": "1:02:03", "channel": "dev", "user": "b", "text": "a", "thread": "q1"}\n'
        '{"at": 4000, "channel": "D0BOT", "user": "a", "text": "hi", "channel_type": "im"}\n'
    )
    assert [(line.at, line.channel, line.thread, line.id) for line in lines] == [
        (65.0, "dev", None, "q1"),
        (3723.0, "dev", "q1", None),
        (4000.0, "D0BOT", None, None),
    ]


def test_the_stand_in_answers_every_call_tomo_makes_to_slack() -> None:
    public = {
        name
        for name, member in inspect.getmembers(SlackClient, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    overridden = {name for name in public if name in vars(ReplaySlack)}
    assert public and overridden == public, f"not answered offline: {public - overridden}"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(PROJECT_ROOT),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "JITTER_RATIO": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "app.replay", *args],
        cwd=cwd,  # no .env here: no key, no Slack secrets
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_command_replays_the_japanese_example_offline(tmp_path: Path) -> None:
    result = run_cli(str(EXAMPLES / "lunch.ja.jsonl"), "--speed", "200", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert f"{OFFLINE_LABEL} (no LLM_API_BASE or LLM_API_KEY" in output
    timeline = entries(output)
    assert ("#開発 > deploy", "けんた: ログ見てみます") in timeline
    assert any(w == "#開発 > deploy" and t.startswith("judgment: respond") for w, t in timeline)
    posts = [(w, t) for w, t in timeline if t.startswith("tomo: ")]
    assert [w for w, _ in posts] == ["#開発 > deploy", "#雑談 > lunch"]
    assert all("オフラインのモック返信" in t for _, t in posts)
    assert "3 judgments (1 to respond), 2 replies posted" in output


def test_the_command_refuses_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"at": 0, "channel": "c", "user": "a", "text": "ok"}\nnot json\n')
    result = run_cli(str(bad), cwd=tmp_path)
    missing = run_cli(str(tmp_path / "nothing.jsonl"), cwd=tmp_path)
    speed = run_cli(str(bad), "--speed", "0", cwd=tmp_path)
    assert result.returncode == 2 and "line 2: not JSON" in result.stderr
    assert missing.returncode == 2 and "cannot replay" in missing.stderr
    assert speed.returncode == 2 and "--speed must be more than 0" in speed.stderr
    assert result.stdout == ""


def test_the_summary_counts_in_the_singular_where_there_is_one(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_text('{"at": 0, "channel": "general", "user": "alice", "text": "@tomo hi!"}\n')
    result = run_cli(str(one), "--speed", "600", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "one.jsonl: 1 message in 1 channel, time x600" in result.stdout
    assert "\n1 message, 0 judgments (0 to respond), 1 reply posted; 1 LLM call, " in result.stdout


async def against_the_model(
    slack: FakeSlack, model: FakeModel, lines: list[Any]
) -> tuple[list[tuple[str, str]], Any]:
    """Replay `lines` at SPEED with the model stand-in: the timeline's entries and the summary."""
    settings = replay_settings(
        slack, LLM_MODEL="openai/fake-model", LLM_API_BASE=model.api_base, LLM_API_KEY="sk-fake"
    )
    out = io.StringIO()
    summary = await replay(lines, settings=settings, speed=SPEED, out=out)
    return entries(out.getvalue()), summary


async def test_a_slow_model_does_not_reorder_the_conversation(
    slack: FakeSlack, model: FakeModel, no_internet: list[Any]
) -> None:
    """Its reply to a mention takes 1.5 real seconds, five minutes of the conversation at x200:
    the thanks written two minutes after the mention still comes after tomo's answer, as it
    did in the conversation replayed (a busy machine's seconds are no part of it)."""
    model.responder = lambda request: "Freeze starts Thursday at noon."
    model.delay(1.5)
    lines = parse_conversation(
        '{"at": 0, "channel": "dev", "user": "kim", "text": "@tomo when is the deploy freeze?",'
        ' "id": "freeze"}\n'
        '{"at": "2:00", "channel": "dev", "user": "kim", "text": "thanks!", "thread": "freeze"}\n'
    )
    timeline, summary = await against_the_model(slack, model, lines)
    said = [what for _, what in timeline if what.startswith(("kim: ", "tomo: "))]
    assert said == [
        "kim: @tomo when is the deploy freeze?",
        "tomo: Freeze starts Thursday at noon.",
        "kim: thanks!",
    ]
    assert summary.replies == 1 and summary.finished
    assert no_internet == []


async def test_a_slow_judgment_does_not_let_the_next_message_overtake_its_reply(
    slack: FakeSlack, model: FakeModel, no_internet: list[Any]
) -> None:
    """The judgment's answer takes 1.5 real seconds (five minutes at x200) and schedules a
    reply in 30 s; the message written two minutes after that reply was due still comes after
    it, and is a follow-up: the clock stops while tomo works."""

    def responder(request: dict[str, Any]) -> str:
        if purpose_of(request) != "judgment":
            return "Export panel, bottom right."
        if "You are part of this conversation" in str(request):  # the thanks: a follow-up
            return judgment_json(False, reason="the exchange is closing")
        return judgment_json(True, delay=30, reason="a question nobody answered")

    model.responder = responder
    model.delay(1.5)  # the first request: the judgment
    lines = parse_conversation(
        '{"at": 0, "channel": "design", "user": "carol", "text": "how do I export as SVG?",'
        ' "id": "svg"}\n'
        '{"at": "7:30", "channel": "design", "user": "carol", "text": "found it, thanks!"}\n'
    )
    timeline, summary = await against_the_model(slack, model, lines)
    said = [what for _, what in timeline if what.startswith(("carol: ", "tomo: "))]
    assert said == [
        "carol: how do I export as SVG?",
        "tomo: Export panel, bottom right.",
        "carol: found it, thanks!",
    ]
    # tomo answered at the top level, its post the last turn there: carol's is a follow-up.
    assert ("#design", "timer set: judgment in 0:05 (follow_up)") in timeline
    assert summary.replies == 1
