"""What tomo's replies have answered in a conversation (docs/how-tomo-works.md#reply).

A reply answers the messages its prompt held: the conversation up to the message its claim
names (`trigger_ts`), and nothing after it. So a person's message is answered once a reply
whose claim names it, or a later message, has spoken (or is speaking now); tomo's post coming
after it in Slack says nothing, as a message written while tomo wrote gets an earlier ts than
tomo's post. Read from the claims, so every instance of a fleet, and the next start, agree.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col

from app.conversation.claims.status import OWED, spoke
from app.db.models import Reply


async def answered_through(
    connection: AsyncConnection, *, channel: str, thread_ts: str, before: str | None = None
) -> str:
    """The newest message a reply's prompt held in this conversation ("" when none), among
    the replies that spoke or are speaking now; with `before`, among those that answered an
    earlier message than `before`. An owed claim is left out: its message is answered still
    (the claim is taken over). Slack's ts compare as strings within one epoch's digits, and
    the reply table's unique key is read backwards: one row."""
    query = (
        select(col(Reply.trigger_ts))
        .where(
            col(Reply.channel) == channel,
            col(Reply.thread_ts) == thread_ts,
            spoke(),
            col(Reply.status).not_in(sorted(OWED)),
        )
        .order_by(col(Reply.trigger_ts).desc())
        .limit(1)
    )
    if before is not None:
        query = query.where(col(Reply.trigger_ts) < before)
    found = (await connection.execute(query)).scalar()
    return str(found) if found else ""
