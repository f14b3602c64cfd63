"""`python -m app.eval.build --irc DIR --mrmp DIR`: write the labelled set (eval/) from local
copies of the two corpora (git clones of jkkummerfeld/irc-disentanglement and
nu-dialogue/multi-relational-multi-party-chat-corpus), and the generated part of its README
(counts and a sample, app.eval.datasheet). Nothing is downloaded; the same copies and seed
give the same files."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from app.eval import build_irc, build_ja
from app.eval.datasheet import write_datasheet
from app.eval.points import DATA_DIR, Point, excerpt_json, load_points

SEED = 39
IRC_SPLITS = ("dev", "test")
JA_DIALOGUES = 30
SILENT_PER_SPEAK = {"en": 2, "ja": 1}
POINTS_PER_EXCERPT = 6
DATA_FILES = {"en": Path("en") / "ubuntu_irc.jsonl", "ja": Path("ja") / "mrmp_chat.jsonl"}


def _write(path: Path, excerpts: Sequence[list[Point]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [excerpt_json(points[0].excerpt, points) for points in excerpts if points]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return sum(len(points) for points in excerpts)


def build(*, irc: Path, mrmp: Path, out: Path = DATA_DIR, seed: int = SEED) -> dict[str, int]:
    """Write eval/en/ubuntu_irc.jsonl and eval/ja/mrmp_chat.jsonl, and the generated part of
    eval/README.md where `out` has that README; the points written."""
    rng = random.Random(seed)
    logs = sorted(p for split in IRC_SPLITS for p in (irc / "data" / split).glob("*.ascii.txt"))
    english = [
        excerpt
        for log in logs
        for excerpt in build_irc.excerpts_from(
            log, rng=rng, silent_per_speak=SILENT_PER_SPEAK["en"], most=POINTS_PER_EXCERPT
        )
    ]
    folder = mrmp / "multi_relational_multi_party_chat_corpus" / "dialogues"
    dialogues = sorted(folder.glob("*/*.json"))
    chosen = (
        sorted(rng.sample(dialogues, JA_DIALOGUES)) if len(dialogues) > JA_DIALOGUES else dialogues
    )
    japanese = [
        build_ja.excerpt_from(
            path, rng=rng, silent_per_speak=SILENT_PER_SPEAK["ja"], most=POINTS_PER_EXCERPT
        )
        for path in chosen
    ]
    written = {
        "en": _write(out / DATA_FILES["en"], english),
        "ja": _write(out / DATA_FILES["ja"], japanese),
    }
    if (out / "README.md").is_file():
        points = load_points([out / DATA_FILES[language] for language in sorted(DATA_FILES)])
        write_datasheet(out / "README.md", points)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.eval.build", description=__doc__)
    parser.add_argument("--irc", type=Path, required=True, help="irc-disentanglement's folder")
    parser.add_argument("--mrmp", type=Path, required=True, help="the Japanese corpus's folder")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="where to write (eval/)")
    arguments = parser.parse_args(argv)
    written = build(irc=arguments.irc, mrmp=arguments.mrmp, out=arguments.out)
    print(", ".join(f"{language}: {count} points" for language, count in written.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
