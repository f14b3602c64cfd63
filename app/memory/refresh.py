"""The memory job (docs/how-tomo-works.md#memory): LLM-written memories of the workspace, of each
active channel and of each recent thread, rewritten only when what they are made of changed.

Per channel active within ACTIVE_CHANNEL_DAYS: a short-term memory of the last
SHORT_TERM_WINDOW_HOURS (written afresh; dropped when the window is empty) and a long-term
memory (the previous one folded with what is new or edited since). Per thread with a reply
within THREAD_MEMORY_DAYS: a summary, parent first. Then the workspace's short- and long-term
memories from the channel memories of public channels (never from DMs or private channels).

Change detection compares a memory's source_ts with the newest live source ts, and its
updated_at with the newest edit. A deleted message leaves the short-term memory and thread
summaries when they are next written or dropped; a long-term memory is written afresh from
the stored messages (without the previous memory) when a deletion is seen: the newest message
deleted, or a deleted message whose edited_at is newer than the memory.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from sqlalchemy import delete, literal
from sqlalchemy import select as select_columns
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.db.dialects import upsert
from app.db.models import Memory
from app.files.reader import FileReader
from app.llm import LLM
from app.memory import sources
from app.memory.control import forget_records, take_turns, unchanged
from app.memory.plans import Key, Planner, Prompt, clean
from app.slack.identity import Identity

logger = logging.getLogger(__name__)

CONCURRENCY = 4  # memory calls in flight at once
MAX_TOKENS = 1200


@dataclass
class MemoryRun:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def label(key: Key) -> str:
    scope, scope_id, kind = key
    return f"{scope}:{scope_id}:{kind}" if scope_id else f"{scope}:{kind}"


class MemoryService:
    def __init__(
        self,
        *,
        engine: AsyncEngine,
        sessions: async_sessionmaker[AsyncSession],
        llm: LLM,
        identity: Identity,
        persona_name: str,
        active_channel_days: float,
        short_term_hours: float,
        thread_memory_days: float,
        files: FileReader | None = None,
    ) -> None:
        self._engine = engine
        self._files = files  # None: documents are remembered by the text prompts read
        self._sessions = sessions
        self._llm = llm
        self._identity = identity
        self._persona_name = persona_name
        self._active_days = active_channel_days
        self._short_hours = short_term_hours
        self._thread_days = thread_memory_days
        self._dialect = engine.dialect.name
        self._running = asyncio.Lock()
        self._calls = asyncio.Semaphore(CONCURRENCY)

    async def run(self, *, wait: bool = False) -> MemoryRun | None:
        """One pass over every memory; None when skipped (a pass still running, unless `wait`:
        then this one follows it; or tomo does not know who it is yet). One memory failing
        never stops the others."""
        if (self._running.locked() and not wait) or not self._identity.known.is_set():
            logger.info("memory run skipped")
            return None
        async with self._running:
            started = time.time()
            outcome = MemoryRun()
            try:
                await self._run(outcome, now=started)
            except Exception:
                logger.exception("memory run failed")
            logger.info(
                "memory run: %d written, %d removed, %d failed in %.0f ms",
                len(outcome.written),
                len(outcome.removed),
                len(outcome.failed),
                (time.time() - started) * 1000,
            )
            return outcome

    async def _run(self, outcome: MemoryRun, *, now: float) -> None:
        await self._read_documents(since=now - self._active_days * 86400)
        async with self._sessions() as session:
            # Read before the memories themselves: a forget after this is caught at each write.
            forgets = await forget_records(await session.connection())
            active, recent = await sources.channel_activity(
                session,
                active_since=now - self._active_days * 86400,
                short_since=now - self._short_hours * 3600,
            )
            threads = await sources.thread_activity(session, since=now - self._thread_days * 86400)
            channels = await sources.channels(session)
            stored = {
                (m.scope, m.scope_id, m.kind): m
                for m in (await session.exec(select(Memory))).all()  # type: ignore[call-overload]
            }
        planner = Planner(
            persona_name=self._persona_name,
            short_term_hours=self._short_hours,
            now=now,
            me=self._identity.me(),
            forgets=forgets,
        )
        removals = planner.removable(recent, threads, stored)
        await self._remove(outcome, stored, removals)
        steps = planner.channels(channels, active, recent, stored)
        steps += planner.threads(channels, threads, stored)
        await asyncio.gather(*(self._write(outcome, stored, forgets, *step) for step in steps))

        short_removed = any(k[0] == "channel" and k[2] == "short_term" for k in removals)
        steps, removals = planner.workspace(channels, stored, short_removed=short_removed)
        await self._remove(outcome, stored, removals)
        await asyncio.gather(*(self._write(outcome, stored, forgets, *step) for step in steps))

    async def _read_documents(self, *, since: float) -> None:
        """Documents no prompt read (a quiet channel's, a joined channel's history, a burst of
        files) are read before the memories are written: their text is kept with their
        message, and the memories show it (app.files.reader). No connection is held meanwhile."""
        if self._files is None:
            return
        async with self._sessions() as session:
            unread = await sources.unread_documents(session, since=since)
        read = 0
        for channel, carriers in unread.items():
            try:
                read += await self._files.read_documents(channel, carriers)
            except Exception:  # the memories are written all the same
                logger.exception("memory: reading the documents of %s failed", channel)
        if read:
            logger.info("memory: read %d document(s) no prompt had read", read)

    async def _write(
        self,
        outcome: MemoryRun,
        stored: dict[Key, Memory],
        forgets: dict[str, float],
        key: Key,
        prompt: Prompt,
    ) -> None:
        """Write one memory; on any failure keep the previous one and carry on."""
        try:
            async with self._calls:
                read_at = time.time()
                async with self._sessions() as session:
                    written = await prompt(session)
                if written is None:
                    return
                system, source_ts = written
                completion = await self._llm.complete(
                    purpose="memory",
                    messages=[{"role": "system", "content": system}],
                    max_tokens=MAX_TOKENS,
                )
                content = clean(completion.text)
            row = Memory(
                scope=key[0],
                scope_id=key[1],
                kind=key[2],
                content=content,
                source_ts=source_ts,
                updated_at=read_at,
                model=completion.model,
            )
            if not await self._store(row, forgets):
                logger.info(
                    "memory %s not written: its channel was forgotten meanwhile", label(key)
                )
                return
        except Exception as error:
            logger.warning("memory %s not written, keeping the previous: %s", label(key), error)
            outcome.failed.append(label(key))
            return
        stored[key] = row
        outcome.written.append(label(key))
        logger.info("memory %s written (%d chars, source %s)", label(key), len(content), source_ts)

    async def _store(self, row: Memory, forgets: dict[str, float]) -> bool:
        """Write the memory unless a forget it was not made with has happened since (checked
        in the same statement); False when it was not written."""
        values = row.model_dump(exclude={"id"})
        columns = Memory.__table__.c  # type: ignore[attr-defined]
        source = select_columns(*(literal(v, columns[k].type) for k, v in values.items())).where(
            unchanged(scope=row.scope, scope_id=row.scope_id, records=forgets)
        )
        statement = upsert(self._dialect, Memory).from_select(list(values), source)
        statement = statement.on_conflict_do_update(
            index_elements=["scope", "scope_id", "kind"],
            set_={k: v for k, v in values.items() if k not in ("scope", "scope_id", "kind")},
        )
        async with self._engine.begin() as connection:
            await take_turns(connection)
            result = await connection.execute(statement)
        return bool(result.rowcount)

    async def _remove(self, outcome: MemoryRun, stored: dict[Key, Memory], keys: list[Key]) -> None:
        if not keys:
            return
        async with self._engine.begin() as connection:
            for scope, scope_id, kind in keys:
                await connection.execute(
                    delete(Memory).where(
                        Memory.scope == scope,  # type: ignore[arg-type]
                        Memory.scope_id == scope_id,  # type: ignore[arg-type]
                        Memory.kind == kind,  # type: ignore[arg-type]
                    )
                )
        for key in keys:
            stored.pop(key, None)
            outcome.removed.append(label(key))
        logger.info("memories removed (their sources are gone): %s", ", ".join(map(label, keys)))
