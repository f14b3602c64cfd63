"""The stored messages bench.recall searches: bench.context's month of messages (its channels,
threads, people and times), with text in English and Japanese instead of its five words, and a
few words planted where their counts are known.

English text is drawn from common words and a long tail of made-up words (each rarer than the
last); a third of the messages are Japanese sentences (nouns and particles, no spaces). One
channel in five is private.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from sqlalchemy.engine import make_url

from app.db.search.index import INDEX_PENDING_SQL
from bench.context import PEOPLE, _messages

CHANNELS = 100
COMMON = (
    "the a to and of is in we it for on that this with deploy review lunch ok thanks "
    "release launch date meeting team build test fix bug customer plan week today tomorrow"
).split()
JAPANESE = (
    "会議 予算 明日 資料 共有 確認 進捗 打ち合わせ リリース 顧客 見積 日程 担当 対応 "
    "報告 修正 検討 レビュー 締め切り 提案 議事録 来週 今日 品質 テスト 障害 計画"
).split()
PARTICLES = ("の", "を", "に", "は", "が", "で", "と", "も")
ENDINGS = ("です。", "ます。", "お願いします。", "しました。", "でしょうか。")
# Planted: (word, one message in how many), for queries of known rarity.
PLANTED = (("zebracorn", 30_000), ("秘密会議", 30_000), ("quokkaplan", 1_000))
_SYLLABLES = "ka ri mo to se na lu vi po de sha qu ze ro ni ba".split()


def _tail(rng: random.Random, size: int = 5000) -> list[str]:
    return ["".join(rng.choice(_SYLLABLES) for _ in range(3)) for _ in range(size)]


def text_of(rng: random.Random, tail: list[str]) -> str:
    if rng.random() < 1 / 3:
        nouns = [rng.choice(JAPANESE) for _ in range(rng.randint(3, 8))]
        body = "".join(n + rng.choice(PARTICLES) for n in nouns[:-1]) + nouns[-1]
        words = [body + rng.choice(ENDINGS)]
    else:
        words = [
            rng.choice(COMMON) if rng.random() < 0.8 else tail[int(rng.paretovariate(1.2)) % 5000]
            for _ in range(rng.randint(4, 24))
        ]
    for word, one_in in PLANTED:
        if rng.randrange(one_in) == 0:
            words.insert(rng.randrange(len(words) + 1), word)
    return " ".join(words)


def channel_id(n: int) -> str:
    return f"G{n:04d}" if n % 5 == 4 else f"C{n:04d}"


def rows(total: int, *, seed: int = 7) -> Iterator[list[tuple[Any, ...]]]:
    """Each channel's message rows: (channel, ts, team, thread_ts, conversation_ts, route,
    user_id, text, created_at), bench.context's with the text replaced."""
    rng = random.Random(seed)
    tail = _tail(rng)
    start = time.time() - 30 * 86400 - 60
    for n in range(CHANNELS):
        made = _messages(channel_id(n), total // CHANNELS, start, rng)
        yield [(*row[:7], text_of(rng, tail), row[8]) for row in made]


def _directory(now: float) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    channels = [(channel_id(n), f"channel-{n}", n % 5 == 4, now) for n in range(CHANNELS)]
    people = [(f"U{p:04d}", f"p{p}", f"Person {p}", now) for p in range(PEOPLE)]
    return channels, people


MESSAGE_COLUMNS = (
    "channel, ts, team_id, thread_ts, conversation_ts, route, user_id, text, created_at, "
    "kind, deleted"
)


def fill_sqlite(path: str, total: int) -> None:
    """Rows through sqlite3, indexed as tomo indexes every message (app.db.search.index)."""
    channels, people = _directory(time.time())
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, updated_at)"
            " VALUES (?, 'T0001', ?, ?, 0, 1, ?)",
            channels,
        )
        db.executemany(
            "INSERT INTO person (id, team_id, name, display_name, real_name, is_bot, fetched_at)"
            " VALUES (?, 'T0001', ?, ?, '', 0, ?)",
            people,
        )
        for chunk in rows(total):
            db.executemany(
                f"INSERT INTO message ({MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "'conversational', 0)",
                chunk,
            )
            for statement in INDEX_PENDING_SQL:  # as the recorder does, a chunk at a time
                db.execute(statement)


def fill_postgresql(url: str, total: int) -> None:
    """Rows through COPY (the GIN index takes them as it takes every insert)."""
    channels, people = _directory(time.time())
    plain = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(plain) as db, db.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO channel (id, team_id, name, is_private, is_im, is_member, updated_at)"
            " VALUES (%s, 'T0001', %s, %s, false, true, %s)",
            channels,
        )
        cursor.executemany(
            "INSERT INTO person (id, team_id, name, display_name, real_name, is_bot, fetched_at)"
            " VALUES (%s, 'T0001', %s, %s, '', false, %s)",
            people,
        )
        for chunk in rows(total):
            with cursor.copy(f"COPY message ({MESSAGE_COLUMNS}) FROM STDIN") as copy:
                for row in chunk:
                    copy.write_row((*row, "conversational", False))
        cursor.execute("ANALYZE message")
