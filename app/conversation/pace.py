"""The lively-channel pace (docs/how-tomo-works.md#the-quiet-wait): the quiet wait before a
judgment shrinks with how many messages people wrote in the channel lately.

    pace = people's conversational messages in the channel (threads included) within
           PACE_WINDOW_SECONDS before the new one
    wait = MIN_WAIT_SECONDS                                   when pace <= QUIET_PACE
         = max(floor, MIN_WAIT_SECONDS * QUIET_PACE / pace)   otherwise

where floor = min(PACE_MIN_WAIT_SECONDS, MIN_WAIT_SECONDS), and JITTER_RATIO spreads the result
as before, never below the floor. A quiet channel waits MIN_WAIT_SECONDS as it always did.

The pace is read from the stored messages, so every instance of a fleet sees the same; in the
transaction that records the new messages, together with the follow-up read (one grouped count
for the messages acknowledged together, by the message table's primary key), and only for
messages routed to a judgment.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from sqlalchemy import bindparam, func, select
from sqlalchemy.engine import Connection
from sqlmodel import col

from app.db.ingest import NewMessage, Reroute
from app.db.models import Message
from app.domain import Route, RouteKind
from app.slack.kinds import MessageKind

logger = logging.getLogger(__name__)

# Up to this many messages within the window, a channel is quiet: the wait is MIN_WAIT_SECONDS.
QUIET_PACE = 5

_PACE = (
    select(col(Message.channel), func.count())
    .where(
        col(Message.channel).in_(bindparam("channels", expanding=True)),
        col(Message.ts) >= bindparam("since"),
        col(Message.kind) == MessageKind.CONVERSATIONAL.value,
        col(Message.deleted) == False,  # noqa: E712
        col(Message.user_id).is_not(None),
        col(Message.bot_id).is_(None),
    )
    .group_by(col(Message.channel))
)


def paced_wait(*, min_wait: float, floor: float, pace: int, jitter_ratio: float = 0.0) -> float:
    """The quiet wait before a judgment in a channel of this pace, spread by ± `jitter_ratio`."""
    if pace <= QUIET_PACE:
        return max(0.0, min_wait * (1 + random.uniform(-jitter_ratio, jitter_ratio)))
    lowest = min(floor, min_wait)
    wait = max(lowest, min_wait * QUIET_PACE / pace)
    return max(lowest, wait * (1 + random.uniform(-jitter_ratio, jitter_ratio)))


def channel_paces(connection: Connection, channels: Sequence[str], since: float) -> dict[str, int]:
    """People's conversational messages per channel stored since `since`."""
    rows = connection.execute(_PACE, {"channels": sorted(set(channels)), "since": f"{since:.6f}"})
    return {channel: int(count) for channel, count in rows}


def with_pace(reroute: Reroute | None, *, window: float) -> Reroute | None:
    """`reroute` (the follow-up read), then the pace of each lively channel given to the
    messages still routed to a judgment; `window` 0: no pace."""
    if window <= 0:
        return reroute

    def rerouted(
        connection: Connection, messages: Sequence[NewMessage], now: float
    ) -> dict[tuple[str, str], Route]:
        routes = reroute(connection, messages, now) if reroute is not None else {}
        judged = [
            new
            for new in messages
            if new.route.kind is RouteKind.JUDGMENT
            and (new.message.channel, new.message.ts) not in routes
        ]
        if not judged:
            return routes
        try:
            if connection.dialect.name == "postgresql":
                with connection.begin_nested():
                    paces = channel_paces(
                        connection, [n.message.channel for n in judged], now - window
                    )
            else:
                paces = channel_paces(connection, [n.message.channel for n in judged], now - window)
        except Exception:  # the wait stays the quiet one; the messages are recorded
            logger.exception("could not read the channels' pace")
            return routes
        for new in judged:
            pace = paces.get(new.message.channel, 0)
            if pace > QUIET_PACE:
                key = (new.message.channel, new.message.ts)
                routes[key] = Route(RouteKind.JUDGMENT, new.route.conversation_ts, pace=pace)
        return routes

    return rerouted
