"""The lively-channel pace (docs/how-tomo-works.md#the-quiet-wait): the quiet wait before a
judgment shrinks with how many messages people wrote in the channel lately.

    pace = people's conversational messages in the channel (threads included) within
           PACE_WINDOW_SECONDS before the new one
    wait = MIN_WAIT_SECONDS                                   when pace <= QUIET_PACE
         = max(floor, MIN_WAIT_SECONDS * QUIET_PACE / pace)   otherwise

where floor = min(PACE_MIN_WAIT_SECONDS, MIN_WAIT_SECONDS), and JITTER_RATIO spreads the result
as before, never below the floor. A quiet channel waits MIN_WAIT_SECONDS as it always did.

The pace is read from the stored messages, so every instance of a fleet sees the same; in the
transaction that records the new messages, together with the follow-up read, and only for
messages routed to a judgment: a count per channel by the message table's primary key that
stops where the wait reaches the floor (26 messages with the defaults), the channels of the
messages acknowledged together in one statement; a channel found at that most is not counted
again for FLOOR_RECOUNT_SECONDS (FloorPaces).
"""

from __future__ import annotations

import functools
import logging
import random
from collections.abc import Sequence

from sqlalchemy import TextClause, text
from sqlalchemy.engine import Connection

from app.db.dialects import read_guard
from app.db.models import PEOPLES_MESSAGES
from app.domain import Route, RouteKind
from app.recording.deliveries import NewMessage, Reroute

logger = logging.getLogger(__name__)

# Up to this many messages within the window, a channel is quiet: the wait is MIN_WAIT_SECONDS.
QUIET_PACE = 5

# Beyond this many messages the wait is the floor whatever the settings: never counted further.
MOST_COUNTED = 1000

# A statement counts the pace of this many channels at most (SQLite allows 500 SELECTs in one
# compound statement).
CHANNELS_PER_STATEMENT = 100

# A channel counted at the floor's pace is not counted again for this long: in a channel that
# lively every acknowledgement would count the same `most` messages again. Over a window of
# minutes, a pace a second or two old is the pace; a channel below the floor's pace is counted
# every time, so a fleet's burst is seen whole by whichever instance acknowledges its last message.
FLOOR_RECOUNT_SECONDS = 2.0

# Channels remembered at the floor's pace before the expired ones are let go.
FLOOR_CHANNELS_KEPT = 1024


# One channel's people's messages since a time, at most `most` of them: a search of the index
# of people's messages (channel, ts) that stops there, reading no row.
_RECENT = (
    "SELECT ts FROM message WHERE channel = :c{number} AND ts >= :since AND "
    f"{PEOPLES_MESSAGES} LIMIT :most"
)


@functools.lru_cache(maxsize=CHANNELS_PER_STATEMENT)
def _paces(channels: int) -> TextClause:
    """The pace of `channels` channels (bound as c0, c1, ...) in one statement: a statement per
    channel cost more than its search, with a batch's messages spread over many channels (and
    SQLAlchemy's cache key of a compound statement built in Core costs as much again)."""
    return text(
        " UNION ALL ".join(
            f"SELECT {number} AS number, count(*) AS pace FROM "
            f"({_RECENT.format(number=number)}) AS recent{number}"
            for number in range(channels)
        )
    )


def paced_wait(*, min_wait: float, floor: float, pace: int, jitter_ratio: float = 0.0) -> float:
    """The quiet wait before a judgment in a channel of this pace, spread by ± `jitter_ratio`."""
    if pace <= QUIET_PACE:
        return max(0.0, min_wait * (1 + random.uniform(-jitter_ratio, jitter_ratio)))
    lowest = min(floor, min_wait)
    wait = max(lowest, min_wait * QUIET_PACE / pace)
    return max(lowest, wait * (1 + random.uniform(-jitter_ratio, jitter_ratio)))


def most_counted(*, min_wait: float, floor: float) -> int:
    """The pace past which the wait is the floor: counting further changes nothing."""
    lowest = min(floor, min_wait)
    if lowest <= 0:
        return MOST_COUNTED
    return min(MOST_COUNTED, int(QUIET_PACE * min_wait / lowest) + 1)


def channel_paces(
    connection: Connection, channels: Sequence[str], since: float, *, most: int = MOST_COUNTED
) -> dict[str, int]:
    """People's conversational messages per channel stored since `since` (at most `most`)."""
    wanted = sorted(set(channels))
    paces = {}
    for first in range(0, len(wanted), CHANNELS_PER_STATEMENT):
        part = wanted[first : first + CHANNELS_PER_STATEMENT]
        values: dict[str, object] = {f"c{n}": channel for n, channel in enumerate(part)}
        found = connection.execute(
            _paces(len(part)), {**values, "since": f"{since:.6f}", "most": most}
        )
        for number, count in found:
            paces[part[int(number)]] = int(count)
    return paces


class FloorPaces:
    """The channels last counted at the floor's pace (`most` messages or more), until when
    that count stands (FLOOR_RECOUNT_SECONDS). Used by the recorder's one writer at a time."""

    def __init__(self, most: int, recount: float = FLOOR_RECOUNT_SECONDS) -> None:
        self.most, self.recount = most, recount
        self._until: dict[str, float] = {}

    def known(self, channels: Sequence[str], now: float) -> dict[str, int]:
        return {c: self.most for c in channels if self._until.get(c, 0.0) > now}

    def counted(self, paces: dict[str, int], now: float) -> None:
        for channel, pace in paces.items():
            if pace >= self.most:
                self._until[channel] = now + self.recount
        if len(self._until) > FLOOR_CHANNELS_KEPT:
            for channel in [c for c, until in self._until.items() if until <= now]:
                del self._until[channel]


def with_pace(
    reroute: Reroute | None,
    *,
    window: float,
    min_wait: float,
    floor: float,
    recount: float = FLOOR_RECOUNT_SECONDS,
) -> Reroute | None:
    """`reroute` (the follow-up read), then the pace of each lively channel given to the
    messages still routed to a judgment; `window` 0: no pace. A channel counted at the floor's
    pace less than `recount` seconds ago is not counted again (FloorPaces)."""
    if window <= 0 or min_wait <= 0:
        return reroute
    most = most_counted(min_wait=min_wait, floor=floor)
    at_floor = FloorPaces(most, recount)

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
        channels = sorted({new.message.channel for new in judged})
        paces = at_floor.known(channels, now)
        unknown = [channel for channel in channels if channel not in paces]
        if unknown:
            try:
                with read_guard(connection):
                    counted = channel_paces(connection, unknown, now - window, most=most)
            except Exception:  # their waits stay the quiet one; the messages are recorded
                logger.exception("could not read the channels' pace")
                counted = {}
            at_floor.counted(counted, now)
            paces.update(counted)
        for new in judged:
            pace = paces.get(new.message.channel, 0)
            if pace > QUIET_PACE:
                key = (new.message.channel, new.message.ts)
                routes[key] = Route(RouteKind.JUDGMENT, new.route.conversation_ts, pace=pace)
        return routes

    return rerouted
