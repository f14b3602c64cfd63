"""What Slack took away from tomo, recorded with the event that says so (on the ack path).

A channel deleted (`channel_deleted`, `group_deleted`) or left (`channel_left`, `group_left`),
or the app uninstalled / its bot token revoked: an `erasure` row, written in the same commit
as the event id, so it survives any restart. While the row is there nothing more of the
channel (or of the workspace) is stored; the deletion itself is app.retention.erase's work,
off the ack path. tomo invited back into a channel it left removes that channel's row.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import Erasure
from app.slack.events import ChannelGone, ChannelLeft, MemberJoined, WorkspaceGone

CHANNEL, TEAM = "channel", "team"
FORGET = "forget"  # not an erasure: a channel's /tomo forget, read with them (`marks`)
DELETED, LEFT = "deleted", "left"

# The changes an event asks of the erasure records; a MemberJoined here is tomo's own.
ErasureChange = ChannelGone | ChannelLeft | WorkspaceGone | MemberJoined


def note_erasure(connection: Connection, change: object, *, now: float) -> bool:
    """Record what `change` says was taken away (False when it is no such change)."""
    dialect = connection.dialect.name
    if isinstance(change, ChannelGone):
        statement = upsert(dialect, Erasure).values(
            scope=CHANNEL, target=change.channel, reason=DELETED, requested_at=now
        )
        connection.execute(
            statement.on_conflict_do_update(
                index_elements=["scope", "target"],
                set_={"reason": DELETED, "requested_at": now, "done_at": None},
            )
        )
        return True
    if isinstance(change, ChannelLeft):
        # A channel already deleted stays so; one left twice keeps its first time.
        connection.execute(
            upsert(dialect, Erasure)
            .values(scope=CHANNEL, target=change.channel, reason=LEFT, requested_at=now)
            .on_conflict_do_nothing()
        )
        return True
    if isinstance(change, WorkspaceGone):
        # Slack's own time when it gives one: a later event (same clock) proves a reinstall.
        # An uninstall after an earlier one (installed again meanwhile) starts a new deletion.
        at = change.at if change.at is not None else now
        statement = upsert(dialect, Erasure).values(
            scope=TEAM, target=change.team_id, reason=change.reason, requested_at=at
        )
        connection.execute(
            statement.on_conflict_do_update(
                index_elements=["scope", "target"],
                set_={"reason": change.reason, "requested_at": at, "done_at": None},
                where=col(Erasure.requested_at) < at,
            )
        )
        return True
    if isinstance(change, MemberJoined):
        connection.execute(
            delete(Erasure).where(
                col(Erasure.scope) == CHANNEL,
                col(Erasure.target) == change.channel,
                col(Erasure.reason) == LEFT,
            )
        )
        return True
    return False


@dataclass(frozen=True)
class Installed:
    """An event Slack delivered to tomo's bot user (app.slack.envelope.install_proof): the
    app was installed in workspace `team_id` at `at` (Slack's event_time)."""

    at: float
    team_id: str


@dataclass(frozen=True)
class Mark:
    scope: str
    target: str
    requested_at: float
    done: bool


# What was taken away, and the channels forgotten (scope "forget", at their forget time):
# the facts the gate decides by (app.gate.rules), in one read of two small tables.
_MARKS = (
    "SELECT scope, target, requested_at, done_at FROM erasure UNION ALL "
    "SELECT 'forget', channel, forgotten_at, NULL FROM channel_control "
    "WHERE forgotten_at IS NOT NULL"
)


def marks(connection: Connection) -> list[Mark]:
    """What was taken away, and when each forgotten channel was forgotten: one read of two
    tables that are usually empty or nearly (a row per channel whose mode was set)."""
    rows = connection.exec_driver_sql(_MARKS).all()
    return [Mark(scope, target, at, done is not None) for scope, target, at, done in rows]


@dataclass(frozen=True)
class Lifted:
    """What events delivered after an uninstall did: the marks left, whether one was lifted,
    and the uninstalls whose deletion is still under way (an event proving a reinstall of
    one of them waits: Slack delivers it again)."""

    left: list[Mark]
    lifted: bool = False
    under_way: tuple[Mark, ...] = ()

    def waits(self, installed: Installed | None) -> bool:
        return installed is not None and any(_proves(installed, m) for m in self.under_way)


def _proves(installed: Installed, mark: Mark) -> bool:
    """An event delivered after the uninstall, for its workspace (a late retry of an event
    from before it carries its old event_time, and proves nothing)."""
    same_team = not mark.target or not installed.team_id or installed.team_id == mark.target
    return same_team and installed.at > mark.requested_at


def lift(connection: Connection, found: list[Mark], proofs: list[Installed]) -> Lifted:
    """The workspace is tomo's again once Slack delivers it an event after the uninstall:
    a finished deletion's mark is deleted here, in the transaction that stores the event,
    so every instance stores the workspace's messages again from this commit on."""
    left, under_way, lifted = [], [], False
    for mark in found:
        if mark.scope != TEAM or not any(_proves(p, mark) for p in proofs):
            left.append(mark)
        elif not mark.done:
            left.append(mark)
            under_way.append(mark)
        else:
            connection.execute(
                delete(Erasure).where(
                    col(Erasure.scope) == TEAM,
                    col(Erasure.target) == mark.target,
                    col(Erasure.done_at).is_not(None),
                )
            )
            lifted = True
    return Lifted(left, lifted, tuple(under_way))


async def pending(connection: AsyncConnection) -> list[Erasure]:
    """The deletions not finished (a channel deleted, the workspace gone), oldest first."""
    rows = await connection.execute(
        select(Erasure.__table__)  # type: ignore[attr-defined]
        .where(col(Erasure.reason) != LEFT, col(Erasure.done_at).is_(None))
        .order_by(col(Erasure.requested_at))
    )
    return [Erasure.model_validate(dict(row)) for row in rows.mappings().all()]


async def left_before(connection: AsyncConnection, moment: float) -> list[str]:
    """The channels tomo was removed from before `moment` (and not invited back since)."""
    rows = await connection.execute(
        select(col(Erasure.target)).where(
            col(Erasure.scope) == CHANNEL,
            col(Erasure.reason) == LEFT,
            col(Erasure.requested_at) < moment,
        )
    )
    return list(rows.scalars())


async def workspace_gone(connection: AsyncConnection) -> str | None:
    """Why tomo's workspace is gone (app_uninstalled, tokens_revoked), or None."""
    rows = await connection.execute(
        select(col(Erasure.reason)).where(col(Erasure.scope) == TEAM).limit(1)
    )
    return rows.scalar_one_or_none()


async def welcome_back(connection: AsyncConnection) -> int:
    """The bot token works again (the app was installed anew): the workspace is tomo's
    again. Only a finished deletion is lifted; one under way goes on first."""
    result = await connection.execute(
        delete(Erasure).where(col(Erasure.scope) == TEAM, col(Erasure.done_at).is_not(None))
    )
    return int(result.rowcount or 0)
