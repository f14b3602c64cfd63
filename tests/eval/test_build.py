"""The labelling rules of the data set's build, on small corpora written here in the corpora's
own formats (irc-disentanglement's data/README.md; the Japanese corpus's README)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from app.eval import build_irc, build_ja
from app.eval.labels import kind_at
from app.eval.points import Line


def _log(tmp_path: Path) -> Path:
    """1,000 join lines (the corpus annotates from line 1000 on), then a help conversation."""
    lines = ["=== someone [~x@example.org] has joined #ubuntu"] * 1000
    lines += [
        "[10:00] <alice> how do I mount an ntfs disk?",  # 1000
        "[10:00] <bob> anyone seen the new release?",  # 1001
        "[10:01] <helper> alice: sudo mount -t ntfs /dev/sdb1 /mnt",  # 1002, replies to 1000
        "[10:01] <carol> bob: yes, it is out",  # 1003, replies to 1001
        "[10:02] <alice> helper: permission denied",  # 1004, replies to 1002
        "[10:02] <helper> alice: add sudo",  # 1005, replies to 1004
        "[10:03] <bob> carol: nice",  # 1006, replies to 1003
        "[10:03] <dave> * dave waves",  # 1007
    ]
    log = tmp_path / "2010-01-01_10.ascii.txt"
    log.write_text("\n".join(lines) + "\n")
    links = ["1000 1000 -", "1001 1001 -", "1000 1002 -", "1001 1003 -", "1002 1004 -"]
    links += ["1004 1005 -", "1003 1006 -", "1007 1007 -"]
    (tmp_path / "2010-01-01_10.annotation.txt").write_text("\n".join(links) + "\n")
    return log


def test_irc_labels_follow_the_reply_links(tmp_path: Path) -> None:
    log = build_irc.read_log(_log(tmp_path))
    parents = build_irc.read_links(tmp_path / "2010-01-01_10.annotation.txt")
    found = build_irc._points(log, parents, "helper")
    # alice's question and her follow-up were answered by the helper; bob's and carol's talk
    # (another conversation) was not; nobody replied to dave.
    assert found[1000] == (True, ())
    assert found[1004] == (True, ("helper",))
    assert found[1001] == (False, ())
    assert found[1003] == (False, ("bob",))
    assert found[1006] == (False, ("carol",))
    assert 1002 not in found and 1005 not in found  # the stand-in's own messages


def test_the_kind_follows_tomos_top_level_rule() -> None:
    def lines(*users: str) -> list[Line]:
        return [Line(user, "x", 1000.0 + 60 * n) for n, user in enumerate(users)]

    assert kind_at(lines("me", "a", "a", "b"), 3, "me") == "follow_up"  # turns: b, a, me
    assert kind_at(lines("me", "a", "b", "c"), 3, "me") == "join"  # three others since
    assert kind_at(lines("a", "b"), 1, "me") == "join"
    stale = [Line("me", "x", 0.0), Line("a", "x", 4000.0)]  # over the 30-minute window
    assert kind_at(stale, 1, "me") == "join"


def test_japanese_labels_are_who_wrote_next(tmp_path: Path) -> None:
    people = ["うさぎ", "えのき", "てばさき"]
    rng = random.Random(7)
    utterances = []
    for number in range(60):
        speaker = rng.choice(people)
        mention = [rng.choice(people)] if number % 4 == 0 else []
        text = (f"@{mention[0]} " if mention else "") + f"発話{number}"
        utterances.append(
            {
                "utterance_id": number,
                "interlocutor_id": speaker,
                "text": text,
                "mention_to": mention,
            }
        )
    dialogue = {"dialogue_id": "A00101", "interlocutors": people, "utterances": utterances}
    path = tmp_path / "A00101.json"
    path.write_text(json.dumps(dialogue, ensure_ascii=False))
    points = build_ja.excerpt_from(path, rng=random.Random(1), silent_per_speak=10, most=100)
    assert points
    for point in points:
        shown = point.excerpt.messages
        number = int(shown[point.index].text.rsplit("発話", 1)[1])
        stand_in = point.excerpt.stand_in
        assert shown[point.index].user != stand_in
        assert point.speak == (utterances[number + 1]["interlocutor_id"] == stand_in)
        assert list(point.addressees) == utterances[number]["mention_to"]
