"""The evaluation's result: one variant's scores as the JSON report has them (overall, by kind
and by language, with tokens and cost), and the table printed for people."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.eval.metrics import Decision, scored
from app.eval.points import KINDS, breakdown
from app.eval.run import Answer


def _scores(answers: Sequence[Answer]) -> dict[str, Any]:
    decisions = [
        Decision(a.point.speak, a.spoke, a.point.addressed_to_stand_in, a.point.excerpt.id)
        for a in answers
    ]
    costs = [a.cost_usd for a in answers if a.cost_usd is not None]
    return {
        **scored(decisions),
        "unparseable": sum(a.unparseable for a in answers),
        "failed": sum(a.failed for a in answers),
        "prompt_tokens": sum(a.prompt_tokens for a in answers),
        "completion_tokens": sum(a.completion_tokens for a in answers),
        "cost_usd": sum(costs) if costs else None,
    }


def variant_report(answers: Sequence[Answer]) -> dict[str, Any]:
    """Overall scores, `by_kind` and `by_language` for one variant's answers."""
    parts = breakdown([a.point for a in answers])
    return {
        **_scores(answers),
        **{
            part: {name: _scores([answers[i] for i in where]) for name, where in groups.items()}
            for part, groups in parts.items()
        },
    }


def report(
    *,
    model: str,
    answers: Sequence[Answer],
    variants: Sequence[str],
    baselines: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """The JSON report: the first variant's scores at the top, each variant's under `variants`."""
    by_variant = {v: variant_report([a for a in answers if a.variant == v]) for v in variants}
    return {
        "model": model,
        "variant": variants[0],
        **by_variant[variants[0]],
        "baselines": baselines,
        "variants": by_variant,
    }


def _cell(scores: dict[str, Any], name: str) -> str:
    if scores["points"] == 0 or name in scores["undefined"]:
        return "n/a"
    value, interval = scores[name], scores["intervals"][name]
    if name == "unwanted_per_100_silent":
        shown = f"{value:5.1f}"
        return shown if interval is None else f"{shown} [{interval[0]:.0f}-{interval[1]:.0f}]"
    shown = f"{value:6.1%}"
    return shown if interval is None else f"{shown} [{interval[0]:.0%}-{interval[1]:.0%}]"


COLUMNS = (
    ("precision", "precision"),
    ("recall", "recall"),
    ("f1", "F1"),
    ("balanced_accuracy", "bal. acc."),
    ("unwanted_per_100_silent", "unwanted/100"),
    ("missed_direct_address_rate", "missed addr."),
)


def _rows(rows: list[tuple[str, dict[str, Any]]]) -> list[str]:
    width = max(len(name) for name, _ in rows)
    header = f"{'':{width}}  " + "  ".join(f"{title:<19}" for _, title in COLUMNS)
    lines = [header, "-" * len(header)]
    for name, scores in rows:
        cells = [_cell(scores, key) for key, _ in COLUMNS]
        lines.append(f"{name:{width}}  " + "  ".join(f"{cell:<19}" for cell in cells))
    return lines


def table(result: dict[str, Any]) -> str:
    """Rows for each variant and each baseline, overall and by language; each rate with its
    95 % interval ("n/a" where the rate is undefined on those points)."""
    rows = [(f"{result['model']} ({name})", s) for name, s in result["variants"].items()]
    rows += [(f"baseline: {name}", s) for name, s in result["baselines"].items()]
    lines = _rows(rows)
    first = result["variants"][result["variant"]]
    for language, scores in first["by_language"].items():
        lines.append("")
        lines.append(
            f"language {language}: {scores['points']} points ({scores['speak_points']} speak, "
            f"{scores['silent_points']} silent; {scores['addressed_points']} addressed)"
        )
        lines += _rows([(name, s["by_language"][language]) for name, s in rows])
    lines.append("")
    lines.append(
        f"{first['points']} points ({first['speak_points']} speak, {first['silent_points']} "
        f"silent; {first['addressed_points']} addressed to the stand-in); intervals resample "
        "whole conversations"
    )
    for name, scores in result["variants"].items():
        cost = "unknown" if scores["cost_usd"] is None else f"${scores['cost_usd']:.4f}"
        kinds = ", ".join(
            f"{kind} F1 {scores['by_kind'][kind]['f1']:.1%} "
            f"unwanted/100 {scores['by_kind'][kind]['unwanted_per_100_silent']:.1f}"
            for kind in KINDS
        )
        lines.append(
            f"{name}: {kinds}; unparseable {scores['unparseable']}, failed {scores['failed']}; "
            f"tokens {scores['prompt_tokens']} in, {scores['completion_tokens']} out; "
            f"cost {cost}"
        )
    return "\n".join(lines)
