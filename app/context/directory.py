"""Channels and people (docs/how-tomo-works.md: #recording, #channels-and-people): what the bot is a
member of, and people's names.

Names are learnt off the ack path: in the background after a message (`note_people`), and,
for what a prompt is about to show without a name (a channel first seen in an event, people
seen only in thread history), by the job that builds the prompt, which waits for `learn`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.dialects import upsert
from app.db.models import Channel, Person
from app.recording.isolation import storable, summary
from app.recording.recorder import Recorder
from app.slack.events import history_message
from app.slack.guards import slack_id
from app.slack.kinds import SLACKBOT
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

PERSON_TTL_SECONDS = 86400.0
PERSON_RETRY_SECONDS = 300.0


def _name(value: object, *more: object) -> str:
    """The first of the values that is a non-empty string, as the database takes it: no NULs,
    no lone surrogates, 255 characters at most (one bad name must not fail the others)."""
    for candidate in (value, *more):
        if isinstance(candidate, str) and candidate:
            return storable(candidate)[:255]
    return ""


class Directory:
    def __init__(
        self, *, slack: SlackClient, engine: AsyncEngine, recorder: Recorder, history_limit: int
    ) -> None:
        self._slack = slack
        self._engine = engine
        self._recorder = recorder  # its writer stores channels and people
        self._history_limit = history_limit
        self._dialect = engine.dialect.name
        self._looked_up: dict[str, float] = {}  # person or channel: when (back-dated on failure)
        self._lookups: dict[str, asyncio.Task[None]] = {}  # under way, by person or channel
        self._tasks: set[asyncio.Task[None]] = set()
        # Users whose users.info says is_bot (legacy bot users have no bot_id): routing
        # records their messages only. Filled by load_bots and by every users.info answer.
        self.bot_users: set[str] = set()

    def _spawn(self, coroutine: Any) -> asyncio.Task[None]:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def busy(self) -> bool:
        """Whether a lookup or a history fetch is still under way."""
        return bool(self._tasks)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _upsert(
        self, model: Any, rows: list[dict[str, Any]], keys: Iterable[str], *, newer: bool = False
    ) -> None:
        """`newer`: a row is updated only by what is newer than it (by `updated_at`): what
        Slack told since a listing began (app.db.conversation_facts) stays."""
        if not rows:
            return
        statement = upsert(self._dialect, model)
        columns = [c for c in rows[0] if c not in keys]
        statement = statement.on_conflict_do_update(
            index_elements=list(keys),
            set_={c: statement.excluded[c] for c in columns},
            where=(model.updated_at <= statement.excluded.updated_at) if newer else None,
        )

        def store(connection: Connection) -> None:
            connection.execute(statement, rows)

        await self._recorder.write(store)

    async def sync_channels(self) -> int:
        """Record every conversation the bot is a member of, with its name (every page)."""
        now = time.time()  # what Slack says is as of the listing's start, at the latest
        try:
            channels = await self._slack.member_conversations()
        except SlackError as error:
            logger.warning("could not list the bot's channels: %s", error)
            return 0
        # By id: a channel on two pages (the list changed between calls) would otherwise be
        # updated twice by one statement, which PostgreSQL refuses.
        by_id = {
            c["id"]: _channel_row(c, now)
            for c in channels
            if isinstance(c, dict) and slack_id(c.get("id"))
        }
        rows = list(by_id.values())
        try:
            await self._upsert(Channel, rows, ["id"], newer=True)
        except Exception as error:  # the database is busy or away: the next run tries again
            logger.warning("could not store the bot's channels: %s", summary(error))
            return 0
        logger.info("bot is a member of %d conversations", len(rows))
        return len(rows)

    def note_people(self, user_ids: Iterable[str | None]) -> None:
        """Fetch in the background the names of people not seen lately (no I/O here)."""
        now = time.time()
        for user_id in user_ids:
            if user_id and now - self._looked_up.get(user_id, 0.0) > PERSON_TTL_SECONDS:
                self._lookup(user_id, self.fetch_person(user_id))

    def _lookup(self, key: str, coroutine: Any) -> asyncio.Task[None]:
        """Start a lookup, remembered while it runs so a job can wait for it."""
        self._looked_up[key] = time.time()
        task = self._spawn(coroutine)
        self._lookups[key] = task
        task.add_done_callback(lambda _: self._lookups.pop(key, None))
        return task

    async def fetch_person(self, user_id: str) -> None:
        """A person's (or a bot user's) names from users.info; a bot id's (`B…`, a bot
        without a user) from bots.info."""
        method = "bots.info" if user_id.startswith("B") else "users.info"
        try:
            if method == "bots.info":
                row = _bot_row(user_id, await self._slack.bot_info(user_id))
            else:
                row = _person_row(user_id, await self._slack.user_info(user_id))
        except SlackError as error:
            # Try again after a while, not on this person's very next message.
            self._looked_up[user_id] = time.time() - PERSON_TTL_SECONDS + PERSON_RETRY_SECONDS
            logger.warning("%s %s failed: %s", method, user_id, error)
            return
        if row["is_bot"]:
            self.bot_users.add(user_id)
        else:
            self.bot_users.discard(user_id)
        try:
            await self._upsert(Person, [row], ["id"])
        except Exception as error:  # the database is busy or away: the name can wait
            self._looked_up[user_id] = time.time() - PERSON_TTL_SECONDS + PERSON_RETRY_SECONDS
            logger.warning("could not store %s's name: %s", user_id, error)

    async def fetch_channel(self, channel: str) -> None:
        """A channel's name from conversations.info (one first seen in an event)."""
        asked = time.time()
        try:
            info = await self._slack.conversation_info(channel)
        except SlackError as error:
            self._looked_up[channel] = time.time() - PERSON_TTL_SECONDS + PERSON_RETRY_SECONDS
            logger.warning("conversations.info %s failed: %s", channel, error)
            return
        if not slack_id(info.get("id")):
            return
        try:
            await self._upsert(Channel, [_channel_row(info, asked)], ["id"], newer=True)
        except Exception as error:
            logger.warning("could not store the name of %s: %s", channel, error)

    async def learn(self, *, channel: str | None, people: Iterable[str]) -> None:
        """Look up, and wait for, the channel and the people a prompt would show unnamed. A
        lookup under way is waited for; one that failed lately is not made again (the prompt
        then shows the id)."""
        now = time.time()
        keys = [*dict.fromkeys(people), *([channel] if channel else [])]
        waits = []
        for key in keys:
            if key in self._lookups:
                waits.append(self._lookups[key])
            elif now - self._looked_up.get(key, 0.0) > PERSON_TTL_SECONDS:
                lookup = self.fetch_channel(key) if key == channel else self.fetch_person(key)
                waits.append(self._lookup(key, lookup))
        await asyncio.gather(*(asyncio.shield(w) for w in waits), return_exceptions=True)

    async def load_bots(self) -> None:
        """The bot users already known, for routing (after a restart)."""
        try:
            async with self._engine.connect() as connection:
                found = await connection.execute(select(col(Person.id)).where(col(Person.is_bot)))
        except Exception as error:
            logger.warning("could not read the known bot users: %s", error)
            return
        self.bot_users.update(found.scalars())

    def on_bot_joined(self, channel: str) -> None:
        self._spawn(self.fetch_recent_history(channel))

    async def fetch_recent_history(self, channel: str) -> int:
        """A channel the bot just joined: store its recent history (it triggers nothing); how
        many messages the gate let in."""
        try:
            raw = await self._slack.recent_history(channel=channel, limit=self._history_limit)
        except SlackError as error:
            logger.warning("could not fetch the history of %s: %s", channel, error)
            return 0
        messages = [m for r in raw if (m := history_message(r, channel=channel)) is not None]
        # Through the gate: not of a channel tomo has left again meanwhile, not from before
        # the channel's forget, not older than the retention.
        stored = await self._recorder.store(messages)
        await self.sync_channels()
        self.note_people(m.user_id for m in stored)
        logger.info("stored %d messages of newly joined %s", len(stored), channel)
        return len(stored)


def _channel_row(channel: dict[str, Any], now: float) -> dict[str, Any]:
    """A conversation of users.conversations or conversations.info as a Channel row; a DM has
    no name, so it goes by the other person's id."""
    return {
        "id": channel["id"],
        "team_id": _name(channel.get("context_team_id"), channel.get("team"))[:32],
        "name": _name(channel.get("name"), channel.get("user"), channel["id"]),
        # A group DM (and a legacy private channel, a "group") is never public, whatever
        # is_private says: who may see what (app.gate.scope) goes by this column.
        "is_private": any(bool(channel.get(k)) for k in ("is_private", "is_mpim", "is_group")),
        "is_im": bool(channel.get("is_im")),
        # Slack Connect: people of another organisation read it (a channel shared within one
        # Enterprise organisation, is_org_shared, is not).
        "is_ext_shared": bool(channel.get("is_ext_shared")),
        "is_member": True,
        "updated_at": now,
    }


def _person_row(user_id: str, user: dict[str, Any]) -> dict[str, Any]:
    profile = user.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    enterprise = user.get("enterprise_user")
    enterprise = enterprise if isinstance(enterprise, dict) else {}
    return {
        "id": user_id,
        "team_id": _name(user.get("team_id"))[:32],
        "name": _name(user.get("name")),
        "display_name": _name(profile.get("display_name")),
        "real_name": _name(profile.get("real_name"), user.get("real_name")),
        # Slackbot answers is_bot false, yet is not a person (app.slack.kinds).
        "is_bot": bool(user.get("is_bot")) or user_id == SLACKBOT,
        # Who may see what (app.gate.standing): a guest, and the person's organisation.
        "is_guest": bool(user.get("is_restricted") or user.get("is_ultra_restricted")),
        "enterprise_id": _name(enterprise.get("enterprise_id"))[:32],
        "fetched_at": time.time(),
    }


def _bot_row(bot_id: str, bot: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": bot_id,
        "team_id": "",
        "name": _name(bot.get("name")),
        "display_name": _name(bot.get("name")),
        "real_name": "",
        "is_bot": True,
        "is_guest": False,
        "enterprise_id": "",
        "fetched_at": time.time(),
    }
