"""Stored messages as the ChatMessages prompts are made of: who wrote each (tomo, a person, a
bot), its author's name, whether it is a note; and a channel's messages split into its top
level and its threads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.db.models import Channel, Message, Person
from app.db.poison import without_poison
from app.domain import ChannelMessages, ChatMessage
from app.files.shown import shown_text
from app.slack.files import files_from_json
from app.slack.identity import Me
from app.slack.kinds import MessageKind, is_person


def display_name(person: Person | None, user_id: str | None) -> str:
    if person is not None:
        return person.display_name or person.real_name or person.name or person.id
    return user_id or "unknown"


def author_id(row: Message) -> str | None:
    """Whose name a message shows: its user, else (a bot without a user) its bot id."""
    return row.user_id or row.bot_id


def to_chat(rows: Iterable[Message], people: dict[str, Person], me: Me) -> list[ChatMessage]:
    chat = []
    for row in without_poison(rows):
        author = people.get(author_id(row) or "")
        files = files_from_json(row.files)
        chat.append(
            ChatMessage(
                ts=row.ts,
                thread_ts=row.thread_ts,
                user_id=row.user_id,
                author=display_name(author, author_id(row)),
                text=shown_text(row.text, files),
                created_at=row.created_at,
                from_self=me.wrote(row),
                from_bot=(author is not None and author.is_bot)
                or not is_person(user_id=row.user_id, bot_id=row.bot_id, subtype=row.subtype),
                edited=row.edited_at is not None,
                note=row.kind != MessageKind.CONVERSATIONAL,
                files=files,
            )
        )
    return chat


def split_channel(
    channel: Channel,
    messages: Sequence[ChatMessage],
    target: Sequence[ChatMessage] = (),
    *,
    target_thread_ts: str = "",
) -> ChannelMessages:
    """Top-level messages and threads (parent first) from a flat list; the target thread's
    messages are merged in whole so the conversation at hand is never cut off."""
    by_ts = {m.ts: m for m in (*messages, *target)}
    ordered = sorted(by_ts.values(), key=lambda m: float(m.ts))
    top = tuple(m for m in ordered if not m.thread_ts)
    threads: dict[str, list[ChatMessage]] = {target_thread_ts: []} if target_thread_ts else {}
    for message in ordered:
        if message.thread_ts:
            threads.setdefault(message.thread_ts, []).append(message)
    thread_messages = {}
    for thread_ts, replies in threads.items():
        parent = by_ts.get(thread_ts)
        thread_messages[thread_ts] = ((parent,) if parent else ()) + tuple(replies)
    return ChannelMessages(channel.id, channel.name or channel.id, top, thread_messages)
