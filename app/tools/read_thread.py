"""`read_thread(permalink)` or `read_thread(channel, ts)`: a whole thread, parent first, from what
tomo stored, completed by Slack's conversations.replies; only where the reader may see.

What Slack gives is stored through the gate (app.gate.rules); what the gate will not store
because it is older than the retention is still shown, read live for the person who asked,
while nothing written before the channel's `/tomo forget` is stored or shown."""

from __future__ import annotations

import logging
from typing import Any, ClassVar, TypeGuard

from sqlalchemy import and_, false, select

from app.db.models import Message
from app.db.search.service import COLUMNS, MESSAGES
from app.domain import Route, RouteKind
from app.gate.rules import Gate, after_forget, to_show
from app.recording.ingest import message_row
from app.slack.events import IncomingMessage, MessageDeleted, history_message
from app.slack.kinds import MessageKind
from app.slack.permalinks import Linked, parse_permalink
from app.slack.timestamps import slack_ts
from app.slack.web.client import SlackError
from app.tools.base import RESULT_CHARS, Asker, ToolResult, failed
from app.tools.kit import Kit
from app.tools.messages_shown import clip, link, named, place, visible_channel, when

logger = logging.getLogger(__name__)

THREAD_MESSAGES = 300  # the parent and its newest replies
NOTHING = "No thread found there."
# Each message's text is cut to the first of these that lets the thread fit in a result.
MESSAGE_CHARS = (1000, 500, 300, 200, 120, 80)
_ARGUMENTS = frozenset({"permalink", "channel", "ts"})
_M = MESSAGES.c


class ReadThread:
    name: ClassVar[str] = "read_thread"
    description: ClassVar[str] = (
        "Read a whole Slack thread, parent first: give a message's permalink (as "
        "search_messages shows it), or its channel and ts."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "permalink": {"type": "string", "description": "A message's Slack permalink."},
            "channel": {"type": "string", "description": "The channel id (with ts)."},
            "ts": {"type": "string", "description": "The message's ts (with channel)."},
        },
    }

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        return "Reading the thread"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        asked = _asked(arguments)
        if isinstance(asked, str):
            return failed(asked)
        scope = await self._kit.scopes.for_asker(asker)
        async with self._kit.engine.connect() as connection:
            channel = await visible_channel(connection, scope, asked.channel)
            if channel is None:
                return ToolResult(NOTHING)
            stored = await connection.scalar(
                select(_M.thread_ts).where(_M.channel == channel["id"], _M.ts == asked.ts)
            )
        root = asked.thread_ts or stored or asked.ts
        live = await self._complete(channel["id"], root)
        async with self._kit.engine.connect() as connection:
            gate = await to_show(connection, [m for m in live or () if _is_message(m)])
            rows = _merged(await self._thread(connection, channel["id"], root), live, gate)
            found, channels = await named(connection, rows, self._kit.identity.me())
        if not found:
            return ToolResult(NOTHING)
        parent = next((m for _, m in found if m.ts == root), found[0][1])
        url = link(self._kit.identity.url, channel=channel["id"], message=parent)
        where = place(channels.get(channel["id"]), channel["id"], here=asker.channel)
        heading = (
            f"Thread in {where}, {len(found)} messages, started {when(parent.created_at)}, "
            f"{url or 'no link'}:"
        )
        # Short lines, so that a thread of a few hundred messages fits: time (UTC) and name.
        lines = [f"[{when(m.created_at)[5:16]}] {m.author}: {m.text}" for _, m in found]
        return ToolResult(_fit(heading, lines), sources=(url,) if url else ()).bounded()

    async def _complete(
        self, channel: str, root: str
    ) -> list[IncomingMessage | MessageDeleted] | None:
        """What Slack has of the thread, stored through the gate; None when Slack did not
        answer (the thread is then shown as stored)."""
        try:
            raw = await self._kit.slack.thread_messages(
                channel=channel, thread_ts=root, limit=THREAD_MESSAGES
            )
        except SlackError as error:
            logger.warning(
                "read_thread: conversations.replies failed, showing what is stored: %s", error
            )
            return None
        messages = [m for r in raw if (m := history_message(r, channel=channel)) is not None]
        if self._kit.recorder is not None:
            await self._kit.recorder.store(messages)
        return messages

    async def _thread(self, connection: Any, channel: str, root: str) -> list[Any]:
        shown = and_(
            _M.deleted == false(),
            _M.kind == MessageKind.CONVERSATIONAL.value,
            after_forget(channel, _M.created_at),
        )
        parent = (
            await connection.execute(
                select(*COLUMNS).where(_M.channel == channel, _M.ts == root, shown)
            )
        ).all()
        replies = (
            await connection.execute(
                select(*COLUMNS)
                .where(_M.channel == channel, _M.thread_ts == root, _M.ts != root, shown)
                .order_by(_M.ts.desc())
                .limit(THREAD_MESSAGES - 1)
            )
        ).all()
        return [*parent, *sorted(replies, key=lambda r: float(r.ts))]


def _merged(
    stored: list[Any], live: list[IncomingMessage | MessageDeleted] | None, gate: Gate
) -> list[Any]:
    """The thread as stored, with what Slack has that is not stored (older than the
    retention: read live, never stored), but for what the gate will not show and what Slack
    shows deleted; parent first, then the newest replies, oldest first."""
    if not live:
        return stored
    gone = {m.ts for m in live if isinstance(m, MessageDeleted)}
    by_ts = {row.ts: row for row in stored if row.ts not in gone}
    for m in live:
        if (
            isinstance(m, IncomingMessage)
            and m.ts not in by_ts
            and m.conversational
            and gate.shown(m.channel, m.ts, m.created_at)
        ):
            by_ts[m.ts] = Message(**message_row(m, Route(RouteKind.RECORD, m.thread_ts)))
    rows = sorted(by_ts.values(), key=lambda r: float(r.ts))
    parent = [r for r in rows if not r.thread_ts]
    replies = [r for r in rows if r.thread_ts][-(THREAD_MESSAGES - 1) :]
    return [*parent[:1], *replies]


def _is_message(message: IncomingMessage | MessageDeleted) -> TypeGuard[IncomingMessage]:
    return isinstance(message, IncomingMessage)


def _asked(arguments: dict[str, Any]) -> Linked | str:
    """The message asked about, or what is wrong with the arguments."""
    unknown = sorted(set(arguments) - _ARGUMENTS)
    if unknown:
        names = ", ".join(unknown)
        return f"unknown argument {names}; read_thread takes a permalink, or channel and ts"
    if arguments.get("permalink") is not None:
        linked = parse_permalink(arguments["permalink"])
        return linked or "permalink is not a Slack message link (…/archives/C…/p…)"
    channel, ts = arguments.get("channel"), arguments.get("ts")
    if not isinstance(channel, str) or not channel.strip():
        return "give a permalink, or a channel and a ts"
    if slack_ts(ts) is None:
        return "ts must be a Slack message ts, like 1712345678.123456"
    return Linked(channel=channel.strip(), ts=str(ts))


def _fit(heading: str, lines: list[str]) -> str:
    """The thread in one result: each message cut shorter until it fits; a thread too long
    even so keeps its parent and newest replies, and says how many were left out."""
    room = RESULT_CHARS - len(heading) - 80
    for most in MESSAGE_CHARS:
        cut = [clip(line, most) for line in lines]
        if sum(len(line) + 1 for line in cut) <= room:
            return "\n".join([heading, *cut])
    parent, replies = cut[0], cut[1:]
    kept: list[str] = []
    used = len(parent) + 1
    for line in reversed(replies):
        if used + len(line) + 1 > room:
            break
        kept.insert(0, line)
        used += len(line) + 1
    left_out = len(replies) - len(kept)
    return "\n".join([heading, parent, f"({left_out} earlier replies left out)", *kept])
