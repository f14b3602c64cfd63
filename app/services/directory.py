"""Channels and people (SPEC §3.8): what the bot is a member of, and people's display names."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.dialects import upsert
from app.db.isolation import storable, summary
from app.db.messages import store_messages
from app.db.models import Channel, Person
from app.db.recorder import Recorder
from app.slack.client import SlackClient, SlackError
from app.slack.events import message_from_raw
from app.slack.guards import slack_id

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
        self._people_fresh: dict[str, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _upsert(self, model: Any, rows: list[dict[str, Any]], keys: Iterable[str]) -> None:
        if not rows:
            return
        statement = upsert(self._dialect, model)
        columns = [c for c in rows[0] if c not in keys]
        statement = statement.on_conflict_do_update(
            index_elements=list(keys), set_={c: statement.excluded[c] for c in columns}
        )

        def store(connection: Connection) -> None:
            connection.execute(statement, rows)

        await self._recorder.write(store)

    async def sync_channels(self) -> int:
        """Record every conversation the bot is a member of, with its name (every page)."""
        try:
            channels = await self._slack.member_conversations()
        except SlackError as error:
            logger.warning("could not list the bot's channels: %s", error)
            return 0
        now = time.time()
        # By id: a channel on two pages (the list changed between calls) would otherwise be
        # updated twice by one statement, which PostgreSQL refuses.
        by_id = {
            c["id"]: {
                "id": c["id"],
                "team_id": _name(c.get("context_team_id"), c.get("team"))[:32],
                "name": _name(c.get("name"), c.get("user"), c["id"]),
                "is_private": bool(c.get("is_private")),
                "is_im": bool(c.get("is_im")),
                "is_member": True,
                "updated_at": now,
            }
            for c in channels
            if isinstance(c, dict) and slack_id(c.get("id"))
        }
        rows = list(by_id.values())
        try:
            await self._upsert(Channel, rows, ["id"])
        except Exception as error:  # the database is busy or away: the next run tries again
            logger.warning("could not store the bot's channels: %s", summary(error))
            return 0
        logger.info("bot is a member of %d conversations", len(rows))
        return len(rows)

    def note_people(self, user_ids: Iterable[str | None]) -> None:
        """Fetch in the background the names of people not seen lately (no I/O here)."""
        now = time.time()
        for user_id in user_ids:
            if user_id and now - self._people_fresh.get(user_id, 0.0) > PERSON_TTL_SECONDS:
                self._people_fresh[user_id] = now
                self._spawn(self.fetch_person(user_id))

    async def fetch_person(self, user_id: str) -> None:
        try:
            user = await self._slack.user_info(user_id)
        except SlackError as error:
            # Try again after a while, not on this person's very next message.
            self._people_fresh[user_id] = time.time() - PERSON_TTL_SECONDS + PERSON_RETRY_SECONDS
            logger.warning("users.info %s failed: %s", user_id, error)
            return
        profile = user.get("profile")
        profile = profile if isinstance(profile, dict) else {}
        row = {
            "id": user_id,
            "team_id": _name(user.get("team_id"))[:32],
            "name": _name(user.get("name")),
            "display_name": _name(profile.get("display_name")),
            "real_name": _name(profile.get("real_name"), user.get("real_name")),
            "is_bot": bool(user.get("is_bot")),
            "fetched_at": time.time(),
        }
        try:
            await self._upsert(Person, [row], ["id"])
        except Exception as error:  # the database is busy or away: the name can wait
            self._people_fresh[user_id] = time.time() - PERSON_TTL_SECONDS + PERSON_RETRY_SECONDS
            logger.warning("could not store %s's name: %s", user_id, error)

    def on_bot_joined(self, channel: str) -> None:
        self._spawn(self.fetch_recent_history(channel))

    async def fetch_recent_history(self, channel: str) -> int:
        """A channel the bot just joined: store its recent history (it triggers nothing)."""
        try:
            raw = await self._slack.recent_history(channel=channel, limit=self._history_limit)
        except SlackError as error:
            logger.warning("could not fetch the history of %s: %s", channel, error)
            return 0
        messages = [m for r in raw if (m := message_from_raw(r, channel=channel)) is not None]
        async with self._engine.begin() as connection:
            await store_messages(connection, messages)
        await self.sync_channels()
        self.note_people(m.user_id for m in messages)
        logger.info("stored %d messages of newly joined %s", len(messages), channel)
        return len(messages)
