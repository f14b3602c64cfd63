"""Building each reply's scope (app.gate.scope) from where it goes and who reads it there, as
Slack says now: the conversation's kind and sharing are read from the database, where the
events that change them are written as they are recorded (app.db.conversation_facts); what
Slack said of memberships is asked again once a membership event was recorded after it, by
any process (app.gate.memberships); who each reader is (a member, a guest, a person of
another organisation) comes from their Person row, learnt from users.info when unknown."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel import col

from app.db.models import Channel, ConversationChange, Person
from app.gate.memberships import Memberships
from app.gate.rules import to_show
from app.gate.scope import Scope
from app.gate.standing import Standing, standing_of
from app.slack.identity import Identity
from app.slack.web.client import SlackClient

logger = logging.getLogger(__name__)

# People of a conversation learnt from users.info for one scope at most; those left unknown
# count as reading less (the reply shows that conversation alone) until they are learnt.
LOOKUPS = 50
# Looks the people up and stores what users.info says (app.context.directory's `learn`).
Learn = Callable[[list[str]], Awaitable[None]]


class Reader(Protocol):
    """Where the reply goes, and whom it answers (app.tools.base.Asker)."""

    @property
    def channel(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...


@dataclass(frozen=True)
class Here:
    """What the database says of the conversation a reply goes to, now."""

    kind: str  # public, dm, private (a private channel, a group DM, or unknown)
    shared: bool  # a Slack Connect channel: people of another organisation read it
    dm_user: str | None  # the person of a DM
    forgotten: Mapping[str, float]  # the gate's forget times (empty: not asked for)
    here_changed: float  # when its memberships last changed (0: never told)
    person_changed: float  # when those of the person asking (or the DM's) last changed


class Scopes:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        slack: SlackClient,
        identity: Identity | None = None,
        learn: Learn | None = None,
    ) -> None:
        self._engine = engine
        self._identity = identity
        self._learn = learn
        self._memberships = Memberships(slack)

    async def for_asker(self, asker: Reader) -> Scope:
        """What a reply posted where `asker` says may show (a tool's results)."""
        return await self._scope(asker.channel, asker.user_id, forgotten=True)

    async def for_conversation(self, channel: str) -> Scope:
        """What a prompt of `channel` may recall of other conversations (app.context.builder):
        the scope of a reply posted there, whoever asked (a DM's is its person's)."""
        return await self._scope(channel, None, forgotten=False)

    async def _scope(self, here: str, user_id: str | None, *, forgotten: bool) -> Scope:
        found = await self._here(here, user_id, forgotten=forgotten)
        kept: dict[str, Any] = {"conversation": here, "forgotten": found.forgotten}
        alone = Scope(private=frozenset({here}), public=False, **kept)
        if found.kind == "dm":
            person = user_id or found.dm_user
            if not person:  # a DM whose person tomo does not know: it may be anyone
                return alone
            standing = (await self._standings([person]))[person]
            if standing is Standing.GUEST:
                theirs = await self._memberships.channels_of_guest(
                    person, changed_at=found.person_changed
                )
                return Scope(private=(theirs or frozenset()) | {here}, public=False, **kept)
            if standing.reads_less:
                return alone
            private = await self._memberships.private_of(person, changed_at=found.person_changed)
            return Scope(private=(private or frozenset()) | {here}, **kept)
        if found.shared or await self._anyone_reads_less(here, found.here_changed):
            return alone
        if found.kind == "public":
            return Scope(private=frozenset(), **kept)
        return Scope(private=frozenset({here}), **kept)

    async def _anyone_reads_less(self, channel: str, changed_at: float) -> bool:
        """Whether a guest or a person of another organisation is in the conversation (or
        Slack cannot say who is)."""
        members = await self._memberships.members_of(channel, changed_at=changed_at)
        if members is None:
            return True
        me = self._identity.user_id if self._identity is not None else None
        people = sorted(members - {me} if me else members)
        return any(s.reads_less for s in (await self._standings(people)).values())

    async def _standings(self, people: list[str]) -> dict[str, Standing]:
        """Each person's standing, those unknown looked up first (LOOKUPS at most)."""
        found = await self._standings_stored(people)
        unknown = [p for p, s in found.items() if s is Standing.UNKNOWN]
        if unknown and self._learn is not None:
            await self._learn(unknown[:LOOKUPS])
            found |= await self._standings_stored(unknown[:LOOKUPS])
        return found

    async def _standings_stored(self, people: Iterable[str]) -> dict[str, Standing]:
        wanted = list(people)
        if not wanted:
            return {}
        team = self._identity.team_id if self._identity is not None else None
        org = self._identity.enterprise_id if self._identity is not None else None
        async with self._engine.connect() as connection:
            rows = await connection.execute(
                select(
                    col(Person.id),
                    col(Person.team_id),
                    col(Person.enterprise_id),
                    col(Person.is_guest),
                ).where(col(Person.id).in_(wanted))
            )
            by_id = {row.id: row for row in rows.all()}
        return {p: standing_of(by_id.get(p), team_id=team, enterprise_id=org) for p in wanted}

    async def _here(self, channel: str, user_id: str | None, *, forgotten: bool) -> Here:
        """One read for a conversation tomo knows (its row, and when the memberships of it and
        of its person last changed); the gate's forget times only when `forgotten`."""
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(_HERE, {"channel": channel, "user": user_id or ""})
            ).first()
            forgets = (await to_show(connection)).forgotten if forgotten else {}
            if row is None:
                keys = [k for k in (user_id, channel) if k]
                changed = await _changes(connection, keys)
        if row is None:
            kind = "dm" if channel.startswith("D") else "private"
            return Here(kind, False, None, forgets, changed.get(channel, 0.0),
                        changed.get(user_id or "", 0.0))  # fmt: skip
        kind = "dm" if row.is_im else "private" if row.is_private else "public"
        # A DM's Channel row is named after its person (app.context.directory).
        dm_user = row.name if row.is_im and row.name else None
        person_changed = row.user_changed if user_id else row.dm_user_changed
        return Here(
            kind,
            bool(row.is_ext_shared),
            dm_user,
            forgets,
            float(row.here_changed or 0.0),
            float(person_changed or 0.0),
        )


def _changed_at(key: Any) -> Any:
    """SQL: when Slack last told of a membership change of `key` (a person or conversation)."""
    return (
        select(col(ConversationChange.changed_at))
        .where(col(ConversationChange.key) == key)
        .scalar_subquery()
    )


# A conversation's row with when its memberships, and its person's (the one asking, or a
# DM's), last changed: built once, read for every reply and prompt.
_HERE = select(
    col(Channel.is_private),
    col(Channel.is_im),
    col(Channel.is_ext_shared),
    col(Channel.name),
    _changed_at(col(Channel.id)).label("here_changed"),
    _changed_at(bindparam("user")).label("user_changed"),
    _changed_at(col(Channel.name)).label("dm_user_changed"),
).where(col(Channel.id) == bindparam("channel"))


async def _changes(connection: AsyncConnection, keys: list[str]) -> dict[str, float]:
    """When Slack last told of a membership change of these people or conversations."""
    if not keys:
        return {}
    rows: Any = await connection.execute(
        select(col(ConversationChange.key), col(ConversationChange.changed_at)).where(
            col(ConversationChange.key).in_(keys)
        )
    )
    return {key: float(at) for key, at in rows.all()}
