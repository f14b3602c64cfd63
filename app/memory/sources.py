"""What memories are made of: who was active when, and the messages a memory is written from.

The activity of every channel and every thread comes from one GROUP BY query each, whatever
the number of channels; the messages are read only for the memories that must be rewritten.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, case, func, or_
from sqlalchemy import select as select_columns
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.context.builder import load_people
from app.context.chat import author_id, to_chat
from app.db.models import Channel, ChannelControl, Message, Removal
from app.domain import ChatMessage, SharedFile
from app.slack.files import files_from_json
from app.slack.identity import Me
from app.slack.kinds import MessageKind
from app.slack.timestamps import MAX_FUTURE_SECONDS

SOURCE_MESSAGE_LIMIT = 200  # messages one memory call reads at most
SOURCE_CHAR_LIMIT = 40_000  # and their text at most (documents' text included), the newest kept
DOCUMENT_SCAN_LIMIT = 200  # messages with files looked at per run for unread documents


@dataclass(frozen=True)
class Activity:
    """The newest live message of a channel or thread, and its newest edit or removal."""

    newest_ts: str | None  # None: nothing in the window
    last_edit: float  # newest edited_at of a live message, 0 when none
    last_removal: float  # when the newest removal (a message deleted) was, 0 when none


def conversational() -> ColumnElement[bool]:
    return col(Message.kind) == MessageKind.CONVERSATIONAL.value


def _live() -> ColumnElement[bool]:
    return and_(col(Message.deleted).is_(False), conversational())


def _remembered() -> ColumnElement[bool]:
    """Written after the channel's memories were last forgotten (app.memory.control);
    needs the outer join of `_with_forget_records`."""
    return col(Message.created_at) > func.coalesce(col(ChannelControl.forgotten_at), 0.0)


def _with_forget_records(statement: Any) -> Any:
    return statement.outerjoin(
        ChannelControl, col(ChannelControl.channel) == col(Message.channel)
    ).where(_remembered())


def _not_future() -> ColumnElement[bool]:
    """Leaves out poison rows (app.db.poison) whose ts would stay the newest source for ever:
    "inf", "1e300", a ts in the future (NaN as well: it compares greater than any number)."""
    return col(Message.created_at) <= time.time() + MAX_FUTURE_SECONDS


def _edit() -> ColumnElement[float]:
    live = col(Message.deleted).is_(False)
    return func.coalesce(func.max(case((live, col(Message.edited_at)))), 0.0)


async def _removals(session: AsyncSession, *, since: float, threads: bool) -> dict[Any, float]:
    """When messages written since `since` were last deleted (app.db.removal): per channel,
    or per (channel, thread_ts) of thread replies."""
    keys = [col(Removal.channel), col(Removal.thread_ts)] if threads else [col(Removal.channel)]
    statement = select_columns(*keys, func.max(col(Removal.removed_at))).where(
        col(Removal.created_at) >= since
    )
    if threads:
        statement = statement.where(col(Removal.thread_ts) != "")
    rows = await (await session.connection()).execute(statement.group_by(*keys))
    return {(tuple(row[:-1]) if threads else row[0]): float(row[-1]) for row in rows.all()}


async def channel_activity(
    session: AsyncSession, *, active_since: float, short_since: float
) -> tuple[dict[str, Activity], dict[str, Activity]]:
    """Per channel: activity within the active window, and within the short-term window."""
    created, ts = col(Message.created_at), col(Message.ts)
    newest_active = func.max(case((and_(_live(), created >= active_since), ts)))
    newest_short = func.max(case((and_(_live(), created >= short_since), ts)))
    since = min(active_since, short_since)
    rows = await (await session.connection()).execute(
        _with_forget_records(
            select_columns(col(Message.channel), newest_active, newest_short, _edit()).where(
                created >= since, _not_future()
            )
        ).group_by(col(Message.channel))
    )
    removals = await _removals(session, since=since, threads=False)
    active: dict[str, Activity] = {}
    short: dict[str, Activity] = {}
    for channel, newest, newest_recent, last_edit in rows.all():
        last_removal = removals.get(channel, 0.0)
        if newest:
            active[channel] = Activity(newest, float(last_edit), float(last_removal))
        if newest_recent:
            short[channel] = Activity(newest_recent, float(last_edit), float(last_removal))
    return active, short


async def thread_activity(
    session: AsyncSession, *, since: float
) -> dict[tuple[str, str], Activity]:
    """Threads with a reply since `since`, keyed by (channel, thread_ts)."""
    channel, thread_ts = col(Message.channel), col(Message.thread_ts)
    rows = await (await session.connection()).execute(
        _with_forget_records(
            select_columns(
                channel,
                thread_ts,
                func.max(case((_live(), col(Message.ts)))),
                _edit(),
            ).where(thread_ts != "", col(Message.created_at) >= since, _not_future())
        ).group_by(channel, thread_ts)
    )
    removals = await _removals(session, since=since, threads=True)
    return {
        (row[0], row[1]): Activity(row[2], float(row[3]), removals.get((row[0], row[1]), 0.0))
        for row in rows.all()
        if row[2]
    }


async def unread_documents(
    session: AsyncSession, *, since: float
) -> dict[str, list[tuple[str, tuple[SharedFile, ...]]]]:
    """Per channel, the live messages since `since` that carry a document (or a Slack Connect
    stub) not read yet, newest first, as (ts, files): the memory job reads them before it
    writes, so a document no prompt looked at is remembered by more than its name."""
    rows = await (await session.connection()).execute(
        _with_forget_records(
            select_columns(col(Message.channel), col(Message.ts), col(Message.files)).where(
                col(Message.files).is_not(None),
                _live(),
                col(Message.created_at) >= since,
                _not_future(),
            )
        )
        .order_by(col(Message.created_at).desc())
        .limit(DOCUMENT_SCAN_LIMIT)
    )
    found: dict[str, list[tuple[str, tuple[SharedFile, ...]]]] = {}
    for channel, ts, stored in rows.all():
        files = files_from_json(stored)
        if any(f.text is None and (f.is_document or f.stub) for f in files):
            found.setdefault(channel, []).append((ts, files))
    return found


async def channels(session: AsyncSession) -> dict[str, Channel]:
    return {c.id: c for c in (await session.exec(select(Channel))).all()}  # type: ignore[call-overload]


def shared(channel: Channel | None) -> bool:
    """Whether a channel's memories may be told elsewhere: known, public, not a DM."""
    return channel is not None and not channel.is_private and not channel.is_im


def _size(row: Message) -> int:
    """About the characters a message takes in a memory's prompt: its text and its files
    (with the text read from documents)."""
    return len(row.text) + len(row.files or "")


def _bounded(rows: Sequence[Message]) -> list[Message]:
    """The newest messages whose text fits the character limit, oldest first."""
    kept: list[Message] = []
    size = 0
    for row in sorted(rows, key=lambda r: r.ts, reverse=True):
        size += _size(row)
        if kept and size > SOURCE_CHAR_LIMIT:
            break
        kept.append(row)
    return kept[::-1]


async def _chat(session: AsyncSession, rows: Sequence[Message], me: Me) -> list[ChatMessage]:
    people = await load_people(session, {a for r in rows if (a := author_id(r))})
    return to_chat(rows, people, me)


async def window_messages(
    session: AsyncSession, *, channel: str, since: float, me: Me, after: float = 0.0
) -> list[ChatMessage]:
    """The channel's live messages since `since` (threads included), the newest that fit.
    `after`, here and below: only messages written after it (the channel's forget record)."""
    rows = await session.exec(  # type: ignore[call-overload]
        select(Message)
        .where(Message.channel == channel, Message.created_at >= since, _live())
        .where(col(Message.created_at) > after)
        .order_by(Message.ts.desc())  # type: ignore[attr-defined]
        .limit(SOURCE_MESSAGE_LIMIT)
    )
    return await _chat(session, _bounded(rows.all()), me)


async def new_messages(
    session: AsyncSession,
    *,
    channel: str,
    after_ts: str,
    edited_after: float,
    me: Me,
    after: float = 0.0,
) -> list[ChatMessage]:
    """Messages newer than `after_ts` or edited since `edited_after`, the oldest first, so a
    long backlog is folded in over several runs."""
    rows = await session.exec(  # type: ignore[call-overload]
        select(Message)
        .where(Message.channel == channel, _live(), col(Message.created_at) > after)
        .where(or_(col(Message.ts) > after_ts, col(Message.edited_at) > edited_after))
        .order_by(Message.ts)  # type: ignore[arg-type]
        .limit(SOURCE_MESSAGE_LIMIT)
    )
    kept: list[Message] = []
    size = 0
    for row in rows.all():
        size += _size(row)
        if kept and size > SOURCE_CHAR_LIMIT:
            break
        kept.append(row)
    return await _chat(session, kept, me)


async def latest_messages(
    session: AsyncSession, *, channel: str, me: Me, after: float = 0.0
) -> list[ChatMessage]:
    """The channel's newest live messages that fit, oldest first (a memory made afresh)."""
    rows = await session.exec(  # type: ignore[call-overload]
        select(Message)
        .where(Message.channel == channel, _live(), col(Message.created_at) > after)
        .order_by(Message.ts.desc())  # type: ignore[attr-defined]
        .limit(SOURCE_MESSAGE_LIMIT)
    )
    return await _chat(session, _bounded(rows.all()), me)


async def thread_messages(
    session: AsyncSession, *, channel: str, thread_ts: str, me: Me, after: float = 0.0
) -> list[ChatMessage]:
    """The thread's parent first, then its newest replies that fit, oldest first."""
    rows = await session.exec(  # type: ignore[call-overload]
        select(Message)
        .where(Message.channel == channel, _live(), col(Message.created_at) > after)
        .where(or_(col(Message.thread_ts) == thread_ts, col(Message.ts) == thread_ts))
        .order_by(Message.ts.desc())  # type: ignore[attr-defined]
        .limit(SOURCE_MESSAGE_LIMIT)
    )
    found = rows.all()
    parent: Sequence[Message] = [r for r in found if r.ts == thread_ts]
    replies = _bounded([r for r in found if r.ts != thread_ts])
    if not parent:
        parent = (
            await session.exec(  # type: ignore[call-overload]
                select(Message).where(
                    Message.channel == channel,
                    Message.ts == thread_ts,
                    _live(),
                    col(Message.created_at) > after,
                )
            )
        ).all()
    return await _chat(session, [*parent, *replies], me)
