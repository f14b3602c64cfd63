"""The labelling rules of the data set's build, on small corpora written here in the corpora's
own formats (irc-disentanglement's data/README.md: `.ascii.txt` logs and `.annotation.txt`
lines "parent child -"; the Japanese corpus's README: dialogues with `mention_to`)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from app.eval import build, build_irc, build_ja, irc_log
from app.eval.datasheet import BEGIN, END
from app.eval.labels import kind_at
from app.eval.points import LabelRule, LabelSource, Line, load_points

# (line, reply-to line numbers): a help channel's log from line 1000 on (the corpus annotates
# from there). The stand-in is "helper".
IRC: list[tuple[str, tuple[int, ...]]] = [
    ("[10:00] <alice> how do I mount an ntfs disk?", ()),  # 1000
    ("[10:00] <bob> anyone seen the new release?", ()),  # 1001
    ("[10:01] <helper> alice: sudo mount -t ntfs /dev/sdb1 /mnt", (1000,)),  # 1002
    ("[10:01] <carol> bob: yes, it is out", (1001,)),  # 1003: a reply to a third person
    ("[10:02] <alice> helper: permission denied", (1002,)),  # 1004
    ("[10:02] <helper> alice: add sudo", (1004,)),  # 1005
    ("[10:03] <bob> carol: nice", (1003,)),  # 1006
    ("[10:03] <helper> bob: and the point release too", (1001,)),  # 1007: in their conversation
    ("[10:04] <dave> my wifi is broken", ()),  # 1008
    ("[10:04] <dave> it is an intel card", (1008,)),  # 1009: the same turn
    ("[10:05] <erin> hi", ()),  # 1010
    ("[10:06] <helper> dave: try sudo modprobe iwlwifi", (1008,)),  # 1011: to the turn's start
    ("[10:07] <frank> my sound is gone", ()),  # 1012
    ("[10:07] <erin> anyone?", ()),  # 1013
    ("[10:08] <frank> it stopped after the update", (1012,)),  # 1014: frank went on
    ("[10:09] <helper> frank: reinstall pulseaudio", (1014,)),  # 1015
    ("[10:10] <helper> does anyone know a good irc client?", ()),  # 1016: the helper asks
    ("[10:11] <henry> helper: irssi", (1016,)),  # 1017
    ("[10:12] <helper> henry: thanks", (1017,)),  # 1018
    ("[10:20] <ivan> bye all", ()),  # 1019
    ("[10:30] <erin> later", ()),  # 1020: the log ends within five minutes
]


def _irc(folder: Path, stem: str = "2010-01-01_10") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    joined = "=== someone [~x@example.org] has joined #ubuntu"
    lines = [joined] * 1000 + [t for t, _ in IRC] + [joined] * 60  # room for a 50-line block
    log = folder / f"{stem}.ascii.txt"
    log.write_text("\n".join(lines) + "\n")
    links = [
        f"{parent} {number} -" if replies else f"{number} {number} -"
        for number, (_, replies) in enumerate(IRC, start=1000)
        for parent in (replies or (number,))
    ]
    (folder / f"{stem}.annotation.txt").write_text("\n".join(links) + "\n")
    return log


def test_irc_speak_only_where_the_annotation_links_the_stand_in_to_the_point(
    tmp_path: Path,
) -> None:
    log_path = _irc(tmp_path)
    log = irc_log.read_log(log_path)
    parents = irc_log.read_links(log_path.with_name("2010-01-01_10.annotation.txt"))
    found = build_irc.labels(log, parents, "helper")
    summary = {
        n: ("speak" if label.speak else "silent", label.answer) for n, label in found.items()
    }
    assert summary == {
        1000: ("speak", 1002),  # alice's question, answered
        1001: ("speak", 1007),  # bob's, answered two minutes later
        # carol's reply to bob, and bob's to carol: the helper spoke in their conversation
        # soon after each, but answered bob's question, not them.
        1003: ("silent", None),
        1006: ("silent", None),
        1004: ("speak", 1005),  # addressed to the helper and answered
        1009: ("speak", 1011),  # the helper answered the turn's first line
        1010: ("silent", None),
        1013: ("silent", None),
        1014: ("speak", 1015),
        1019: ("silent", None),
    }
    # Left out: 1008 (dave's turn went on), 1012 (frank went on and the helper answered his
    # later line), 1017 (a reply in the helper's own conversation, where the helper is the one
    # asking), 1020 (the log ends within five minutes), and the helper's own lines.
    assert found[1004].addressees == ("helper",)
    assert found[1006].addressees == ("carol",)
    assert found[1000].addressees == ()
    rules = {label.rule for label in found.values()}
    assert rules == {LabelRule.LINKED_ANSWER, LabelRule.NEVER_ANSWERED}


def test_irc_stand_ins_are_helpers_not_the_people_asking(tmp_path: Path) -> None:
    lines = [
        ("[09:00] <asker> my disk is full", ()),  # 1000: asker's conversation
        ("[09:01] <helpful> asker: run du -sh /*", (1000,)),  # 1001
        ("[09:01] <asker> helpful: ok", (1001,)),  # 1002
        ("[09:02] <asker> helpful: /var is 40G", (1001,)),  # 1003
        ("[09:02] <asker> helpful: what now?", (1003,)),  # 1004
        ("[09:03] <newbie> how do I update?", ()),  # 1005
        ("[09:03] <helpful> newbie: sudo apt update", (1005,)),  # 1006
        ("[09:04] <asker> helpful: thanks", (1001,)),  # 1007
    ]
    log = [None] * 1000 + [
        irc_log.LogLine(number, text.split("> ")[0].split("<")[1], "", 0)
        for number, (text, _) in enumerate(lines, start=1000)
    ]
    parents = {n: set(p) for n, (_, p) in enumerate(lines, start=1000) if p}
    # asker wrote the most, all in the conversation asker began: not a stand-in.
    assert build_irc.helpers(log, parents) == ["helpful"]


def test_the_kind_follows_tomos_top_level_rule() -> None:
    def lines(*users: str) -> list[Line]:
        return [Line(user, "x", 1000.0 + 60 * n) for n, user in enumerate(users)]

    assert kind_at(lines("me", "a", "a", "b"), 3, "me") == "follow_up"  # turns: b, a, me
    assert kind_at(lines("me", "a", "b", "c"), 3, "me") == "join"  # three others since
    assert kind_at(lines("a", "b"), 1, "me") == "join"
    stale = [Line("me", "x", 0.0), Line("a", "x", 4000.0)]  # over the 30-minute window
    assert kind_at(stale, 1, "me") == "join"


# (writer, text, mention_to): a three-person chat; the stand-in is "し".
CHAT: list[tuple[str, str, list[str]]] = [
    ("あ", "こんにちは", []),  # 0
    ("い", "こんにちは", []),  # 1
    ("し", "こんにちは", []),  # 2
    ("あ", "@し 週末は何をしましたか", ["し"]),  # 3: addressed to し, who writes next
    ("し", "山に行きました", []),  # 4
    ("い", "いいですね", []),  # 5: し answers あ, not い
    ("し", "@あ あさんは", ["あ"]),  # 6
    ("あ", "家にいました", []),  # 7: answered two messages later, by an @-mention
    ("い", "私も", []),  # 8
    ("し", "@あ のんびりですね", ["あ"]),  # 9
    ("い", "@あ 何か見ましたか", ["あ"]),  # 10: い's question to あ; し stays out
    ("あ", "@い 映画を", ["い"]),  # 11
    ("い", "@あ いいなあ", ["あ"]),  # 12
    ("あ", "@い おすすめです", ["い"]),  # 13
    ("し", "@あ 何の映画", ["あ"]),  # 14
    ("あ", "アニメです", []),  # 15: its turn goes on
    ("あ", "長いです", []),  # 16: し's next message, after the window, is to い
    ("い", "へえ", []),  # 17: し answers after the window, @-mentioning い
    ("あ", "本当に", []),  # 18
    ("あ", "三時間", []),  # 19
    ("い", "長い", []),  # 20
    ("し", "@い そうですね", ["い"]),  # 21
    ("あ", "また話しましょう", []),  # 22: the window runs past the end
    ("い", "はい", []),  # 23
]


def _chat(path: Path, chat: list[tuple[str, str, list[str]]], dialogue_id: str) -> Path:
    utterances: list[dict[str, Any]] = [
        {"utterance_id": n, "interlocutor_id": who, "text": text, "mention_to": mention}
        for n, (who, text, mention) in enumerate(chat)
    ]
    dialogue = {"dialogue_id": dialogue_id, "interlocutors": ["あ", "い", "し"]}
    path.write_text(json.dumps({**dialogue, "utterances": utterances}, ensure_ascii=False))
    return path


def test_japanese_labels_follow_the_writers_mentions() -> None:
    utterances = [
        {"interlocutor_id": who, "text": text, "mention_to": mention} for who, text, mention in CHAT
    ]
    found = {
        i: build_ja.label_of(utterances, i, "し")
        for i in range(len(CHAT) - 1)
        if CHAT[i][0] != "し" and CHAT[i + 1][0] != CHAT[i][0]
    }
    summary = {
        i: None if label is None else (label.rule, label.answer) for i, label in found.items()
    }
    assert summary == {
        0: None,  # い and then し wrote within the window, to no one
        1: None,
        3: (LabelRule.ADDRESSED_NEXT, 4),  # though し also @-mentions あ two messages later
        5: None,  # し wrote next, but @-mentioned あ: not an answer to い, nor silence
        7: (LabelRule.MENTION_ANSWER, 9),
        8: None,  # likewise a reply to someone else
        10: (LabelRule.NO_REPLY, None),  # nothing from し in the window, and then not to い
        11: None,  # し wrote within the window (to あ, after あ had written again)
        12: None,
        13: (LabelRule.MENTION_ANSWER, 14),
        16: (LabelRule.NO_REPLY, None),
        17: None,  # し's first message after the window @-mentions い: maybe a late answer
        19: None,  # し wrote within the window, to い
        20: (LabelRule.MENTION_ANSWER, 21),
        22: None,  # the window runs past the end
    }


def test_japanese_points_say_their_rule_and_addressees(tmp_path: Path) -> None:
    path = _chat(tmp_path / "A00101.json", CHAT * 2, "A00101")
    # silent_per_speak and most high: every decidable point of the span is kept.
    points = build_ja.excerpt_from(path, rng=random.Random(1), silent_per_speak=10, most=100)
    assert points
    for point in points:
        number = next(
            n
            for n, (who, text, _) in enumerate(CHAT * 2)
            if text == point.excerpt.messages[point.index].text
            and who == point.excerpt.messages[point.index].user
        )
        label = build_ja.label_of(
            [{"interlocutor_id": w, "text": t, "mention_to": m} for w, t, m in CHAT * 2],
            number,
            point.excerpt.stand_in,
        )
        assert label is not None and point.rule == label.rule and point.speak == label.speak
        assert point.label_source is LabelSource.RULE
        if point.answer is not None:
            assert point.excerpt.messages[point.answer].user == point.excerpt.stand_in
            assert point.answer > point.index


def test_the_build_is_reproducible_and_writes_the_readme_part(tmp_path: Path) -> None:
    irc, mrmp = tmp_path / "irc", tmp_path / "mrmp"
    _irc(irc / "data" / "dev")
    dialogues = mrmp / "multi_relational_multi_party_chat_corpus" / "dialogues" / "A_first_time"
    dialogues.mkdir(parents=True)
    for number in range(3):
        _chat(dialogues / f"A0010{number}.json", CHAT * 3, f"A0010{number}")
    outputs = []
    for name in ("one", "two"):
        out = tmp_path / name
        out.mkdir()
        (out / "README.md").write_text(f"# data\n\n{BEGIN}\nstale\n{END}\n")
        written = build.build(irc=irc, mrmp=mrmp, out=out)
        assert written["en"] > 0 and written["ja"] > 0
        outputs.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*.*"))})
    assert outputs[0] == outputs[1]
    readme = outputs[0][Path("README.md")].decode()
    assert "stale" not in readme and "### The points, counted" in readme
    points = load_points(sorted((tmp_path / "one").glob("*/*.jsonl")))
    english = [p for p in points if p.excerpt.language == "en"]
    assert english and all(p.label_source is LabelSource.ANNOTATED for p in english)
    assert {p.excerpt.stand_in for p in english} == {"helper"}
