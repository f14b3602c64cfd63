"""`python -m app.eval` against the model stand-in: tomo's judgment prompt for every point,
answers read by tomo's parser, scores that match what was answered (overall, by kind, by
language), baselines, --limit and --json; and the committed data set is what its README says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.eval.datasheet import datasheet
from app.eval.points import LabelSource, load_points
from tests.conftest import judgment_json, purpose_of
from tests.fakes import FakeModel

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MARK = re.compile(r"#p(\d+)#")
USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}

# (label, what the model answers, addressed to the stand-in "ann", the newest message)
POINTS: list[tuple[str, str, bool, str]] = [
    ("speak", "speak", True, "ann: can you look at my logs?"),  # TP
    ("speak", "speak", False, "anyone know grub?"),  # TP
    ("speak", "silent", True, "ann, still there?"),  # FN, a missed address
    ("speak", "garbage", False, "is X broken?"),  # FN, unparseable
    ("silent", "speak", False, "brb"),  # FP
    ("silent", "silent", False, "lol"),  # TN
    ("silent", "silent", False, "ok"),  # TN
    ("silent", "silent", True, "thanks ann"),  # TN, a missed address
    ("silent", "garbage", False, "heh"),  # TN, unparseable
    ("silent", "speak", False, "night all"),  # FP
]
# Japanese points (numbered on from POINTS): the first three follow-ups, the rest to join.
JA_POINTS: list[tuple[str, str, bool, str]] = [
    ("speak", "speak", True, "@あん 見てもらえますか"),  # TP
    ("speak", "silent", False, "誰か分かりますか"),  # FN
    ("silent", "speak", False, "なるほど"),  # FP
    ("silent", "silent", False, "ですね"),  # TN
    ("speak", "speak", False, "これはどうでしょう"),  # TP
    ("silent", "speak", False, "笑"),  # FP
]


def _excerpt(
    language: str, stand_in: str, rows: list[tuple[str, str, bool, str]], *, first: int
) -> dict[str, Any]:
    """One excerpt: the stand-in's greeting, then a point a message, the first half of them
    follow-ups and the rest to join."""
    at = 1_700_000_000.0
    messages: list[dict[str, Any]] = [{"user": stand_in, "text": "hi all", "at": at}]
    points = []
    follow_ups = (len(rows) + 1) // 2
    for offset, (label, _answer, addressed, text) in enumerate(rows):
        number = first + offset
        messages.append({"user": "bob", "text": f"{text} #p{number}#", "at": at + 60 * number})
        points.append(
            {
                "index": len(messages) - 1,
                "kind": "follow_up" if offset < follow_ups else "join",
                "label": label,
                "label_source": "annotated" if language == "en" else "rule",
                "addressees": [stand_in] if addressed else ["carl"],
            }
        )
    return {
        "id": f"test-{language}",
        "language": language,
        "source": "written for this test",
        "channel": "help",
        "stand_in": stand_in,
        "messages": messages,
        "points": points,
    }


def _data(tmp_path: Path, *, japanese: bool = False) -> Path:
    excerpts = [_excerpt("en", "ann", POINTS, first=1)]
    if japanese:
        excerpts.append(_excerpt("ja", "あん", JA_POINTS, first=len(POINTS) + 1))
    path = tmp_path / "points.jsonl"
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in excerpts))
    return path


def _answers(request: dict[str, Any]) -> Any:
    assert purpose_of(request) == "judgment"
    prompt = str(request["messages"][0]["content"])
    number = int(MARK.findall(prompt)[-1])  # the newest message is the last one shown
    answer = (POINTS + JA_POINTS)[number - 1][1]
    if answer == "garbage":
        return {"content": "I would rather not say.", "usage": USAGE}
    return {"content": "```json\n" + judgment_json(answer == "speak") + "\n```", "usage": USAGE}


def _run(model: FakeModel, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(PROJECT_ROOT),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LLM_API_BASE": model.api_base,
        "LLM_API_KEY": "sk-test",
        "LLM_MAX_RETRIES": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "app.eval", "--model", "openai/gpt-4o-mini", *args],
        cwd=tmp_path,  # no .env here
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_scores_match_the_answers_given(model: FakeModel, tmp_path: Path) -> None:
    model.responder = _answers
    out = tmp_path / "report.json"
    result = _run(model, tmp_path, "--data", str(_data(tmp_path)), "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "10/10" in result.stderr  # the progress bar
    report = json.loads(out.read_text())
    fixed = {"model", "points", "speak_points", "silent_points", "precision", "recall", "f1"}
    fixed |= {"balanced_accuracy", "unwanted_per_100_silent", "missed_direct_address_rate"}
    fixed |= {"unparseable", "prompt_tokens", "completion_tokens", "cost_usd"}
    assert fixed | {"by_kind", "by_language", "baselines"} <= set(report)
    for kind in ("join", "follow_up"):
        assert fixed - {"model"} <= set(report["by_kind"][kind])
    assert set(report["by_language"]) == {"en", "ja"}
    for language in ("en", "ja"):
        assert fixed - {"model"} <= set(report["by_language"][language])
    rates = fixed - {"model", "unparseable", "prompt_tokens", "completion_tokens", "cost_usd"}
    for baseline in report["baselines"].values():
        assert rates <= set(baseline)
    assert report["model"] == "openai/gpt-4o-mini"
    assert (report["points"], report["speak_points"], report["silent_points"]) == (10, 4, 6)
    # TP 2, FN 2, FP 2, TN 4
    assert report["precision"] == pytest.approx(0.5)
    assert report["recall"] == pytest.approx(0.5)
    assert report["f1"] == pytest.approx(0.5)
    assert report["balanced_accuracy"] == pytest.approx((0.5 + 4 / 6) / 2)
    assert report["unwanted_per_100_silent"] == pytest.approx(100 * 2 / 6)
    assert report["missed_direct_address_rate"] == pytest.approx(2 / 3)
    assert report["unparseable"] == 2
    assert report["prompt_tokens"] == 1000 and report["completion_tokens"] == 100
    assert report["cost_usd"] > 0
    follow_up, join = report["by_kind"]["follow_up"], report["by_kind"]["join"]
    assert (follow_up["points"], join["points"]) == (5, 5)
    assert follow_up["precision"] == pytest.approx(2 / 3) and follow_up["recall"] == 0.5
    assert join["unwanted_per_100_silent"] == pytest.approx(20.0) and join["unparseable"] == 1
    low, high = report["intervals"]["f1"]
    assert 0 <= low <= 0.5 <= high <= 1
    # One language here: English is all of it, Japanese nothing (its rates undefined).
    english, japanese = report["by_language"]["en"], report["by_language"]["ja"]
    assert english["points"] == 10 and english["f1"] == report["f1"]
    assert japanese["points"] == 0 and "precision" in japanese["undefined"]
    baselines = report["baselines"]
    assert set(baselines) == {"always_silent", "mentions_only", "random_at_base_rate"}
    assert baselines["always_silent"]["recall"] == 0.0
    assert baselines["always_silent"]["unwanted_per_100_silent"] == 0.0
    assert baselines["always_silent"]["missed_direct_address_rate"] == 1.0
    # "ann" named in points 1, 3 and 8: two speak points and one silent one.
    assert baselines["mentions_only"]["precision"] == pytest.approx(2 / 3)
    assert baselines["mentions_only"]["recall"] == pytest.approx(0.5)
    assert baselines["mentions_only"]["missed_direct_address_rate"] == 0.0
    assert 0 <= baselines["random_at_base_rate"]["f1"] <= 1
    # The table shows the model's row and each baseline's.
    assert "openai/gpt-4o-mini (prefixed)" in result.stdout
    assert "baseline: mentions_only" in result.stdout
    # tomo's own prompt: the follow-up section for follow-up points only.
    prompts = [str(r["messages"][0]["content"]) for r in model.requests]
    follow_ups = [p for p in prompts if "## You are part of this conversation" in p]
    assert len(follow_ups) == 5 and all(int(MARK.findall(p)[-1]) <= 5 for p in follow_ups)


def test_two_variants(model: FakeModel, tmp_path: Path) -> None:
    model.responder = _answers
    out = tmp_path / "report.json"
    data = str(_data(tmp_path))
    result = _run(
        model, tmp_path, "--data", data, "--json", str(out),
        "--variant", "prefixed", "--variant", "bare", "--concurrency", "2", "--quiet",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["points"] == 10 and report["variant"] == "prefixed"
    assert set(report["variants"]) == {"prefixed", "bare"}
    assert len(model.requests) == 20
    first = [str(r["messages"][0]["content"]) for r in model.requests if "#p1#" in str(r)]
    # The stand-in is tomo (its name mapped); the leading address kept in one variant only.
    assert any("\ntomo: can you look at my logs? #p1#" in p for p in first)
    assert any("\ncan you look at my logs? #p1#" in p for p in first)
    assert not any(re.search(r"\bann\b", p) for p in first)


def test_by_language_on_a_limit_spread_over_languages_and_kinds(
    model: FakeModel, tmp_path: Path
) -> None:
    model.responder = _answers
    out = tmp_path / "report.json"
    data = str(_data(tmp_path, japanese=True))  # en: 5 + 5 points, ja: 3 + 3
    result = _run(model, tmp_path, "--data", data, "--json", str(out), "--limit", "8", "--quiet")
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    asked = sorted(int(MARK.findall(str(r["messages"][0]["content"]))[-1]) for r in model.requests)
    assert len(asked) == 8 == report["points"]
    # One from each of the four strata, then the four left to the largest remainders (1.33,
    # 1.33, 0.67, 0.67 of 12): two of each language and kind.
    english, japanese = [n for n in asked if n <= 10], [n for n in asked if n > 10]
    assert len([n for n in english if n <= 5]) == 2 and len(english) == 4
    assert len([n for n in japanese if n <= 13]) == 2 and len(japanese) == 4
    again = _run(model, tmp_path, "--data", data, "--limit", "8", "--quiet")
    assert again.returncode == 0, again.stderr
    repeated = sorted(
        int(MARK.findall(str(r["messages"][0]["content"]))[-1]) for r in model.requests[8:]
    )
    assert repeated == asked  # the same sample on every run
    # Each language's scores come from its own points, counted here from the answers.
    for language, numbers in (("en", english), ("ja", japanese)):
        rows = [(POINTS + JA_POINTS)[n - 1] for n in numbers]
        tp = sum(label == "speak" and answer == "speak" for label, answer, _, _ in rows)
        fp = sum(label == "silent" and answer == "speak" for label, answer, _, _ in rows)
        fn = sum(label == "speak" and answer != "speak" for label, answer, _, _ in rows)
        scores = report["by_language"][language]
        assert scores["points"] == 4
        assert scores["speak_points"] == sum(label == "speak" for label, *_ in rows)
        assert scores["f1"] == pytest.approx(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0)
    assert report["baselines"]["always_silent"]["by_language"]["ja"]["points"] == 4
    assert "language ja: 4 points" in result.stdout


def test_a_bad_data_file_is_refused(model: FakeModel, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "messages": []}\n')
    result = _run(model, tmp_path, "--data", str(bad))
    limit = _run(model, tmp_path, "--limit", "0")
    assert result.returncode == 2 and "bad.jsonl:1" in result.stderr
    assert limit.returncode == 2 and "--limit must be at least 1" in limit.stderr
    assert model.requests == []


def test_the_committed_data_set() -> None:
    points = load_points()
    assert len(points) >= 250
    for language in ("en", "ja"):
        mine = [p for p in points if p.excerpt.language == language]
        for kind in ("join", "follow_up"):
            labels = {p.speak for p in mine if p.kind == kind}
            assert labels == {True, False}, (language, kind)
    assert any(p.addressed_to_stand_in for p in points)
    # English labels are the annotators' reply links; Japanese ones the README's rule.
    assert {p.label_source for p in points if p.excerpt.language == "en"} == {LabelSource.ANNOTATED}
    assert {p.label_source for p in points if p.excerpt.language == "ja"} == {LabelSource.RULE}
    for point in points:
        assert point.rule is not None and point.rule.source == point.label_source
        if point.answer is not None:  # the answer is the stand-in's, after the point
            assert point.speak and point.answer > point.index
            assert point.excerpt.messages[point.answer].user == point.excerpt.stand_in
    assert sum(p.speak and p.answer is not None for p in points) >= 0.95 * sum(
        p.speak for p in points
    )
    readme = (PROJECT_ROOT / "eval" / "README.md").read_text()
    assert "CC BY 4.0" in readme and "CC BY-SA 4.0" in readme
    # The README's counts and sample are those of the committed data.
    assert datasheet(points) in readme
    for folder, commit in (("en", "82ed04f9627a"), ("ja", "e6e39cb896df")):
        assert (PROJECT_ROOT / "eval" / folder / "LICENSE").is_file()
        assert commit in (PROJECT_ROOT / "eval" / folder / "NOTICE.md").read_text()
    size = sum(f.stat().st_size for f in (PROJECT_ROOT / "eval").rglob("*.jsonl"))
    assert size < 400_000


def test_a_model_that_fails_counts_as_silence_and_is_reported(
    model: FakeModel, tmp_path: Path
) -> None:
    model.responder = _answers
    model.fail(status=500, times=1)  # LLM_MAX_RETRIES=0: one point gets no answer
    out = tmp_path / "report.json"
    data = str(_data(tmp_path))
    # One call at a time: the first point (a speak point the model gets right) fails.
    result = _run(
        model, tmp_path, "--data", data, "--json", str(out), "--concurrency", "1", "--quiet"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    assert report["failed"] == 1 and report["unparseable"] == 2
    assert report["recall"] == pytest.approx(1 / 4)  # TP 1 (of 2 answered right), FN 3
    assert "failed 1" in result.stdout
