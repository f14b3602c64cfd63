"""The job worker process: `python -m app.jobs.worker FD`, started by
app.jobs.supervisor.WorkerJobs (which also lowers its CPU priority).

It runs the judgment, reply and memory jobs its parent sends over the socket FD, with the same
services the parent would use inline (its own engine, Slack client and LiteLLM), and answers
each with its result. It ignores SIGTERM and SIGINT, which Heroku and a terminal send to the
whole process group: the parent decides when jobs stop (it gives running ones a grace period),
and the worker exits once the parent closes the socket, or dies.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import signal
import socket
import sys
from typing import Any

from app import llm as llm_module
from app.db.engine import create_engine
from app.jobs.kinds import JobKind
from app.jobs.protocol import encode, lines
from app.logs import log_context, setup_logging
from app.runtime import Runtime, build_runtime, freeze_after_litellm, load_slack_sdk
from app.settings import load_settings

logger = logging.getLogger(__name__)


async def _dispatch(runtime: Runtime, kind: str, kwargs: dict[str, Any]) -> Any:
    if kind == JobKind.REPLY:
        if kwargs.pop(
            "on_it", False
        ):  # the sign is this process's to show (app.conversation.on_it)
            return await runtime.on_it.around(runtime.reply.run)(**kwargs)
        return await runtime.reply.run(**kwargs)
    if kind == JobKind.JUDGMENT:
        decision = await runtime.judgment.run(**kwargs)
        return decision.model_dump() if decision is not None else None
    if kind == JobKind.MEMORY:
        await runtime.memory.run(**kwargs)
        return None
    raise ValueError(f"unknown job kind {kind!r}")


def _learn(runtime: Runtime, me: dict[str, Any] | None) -> None:
    """Who tomo is, as the parent knows it now: it may have learnt the user id from an event
    first and the bot id from auth.test later, so each job's snapshot replaces the last."""
    identity = runtime.identity
    if me and me.get("user_id") and me != identity.snapshot():
        identity.know(user_id=me["user_id"], bot_id=me.get("bot_id"), team_id=me.get("team_id"))


class Worker:
    def __init__(self, runtime: Runtime, writer: asyncio.StreamWriter) -> None:
        self._runtime = runtime
        self._writer = writer
        self._tasks: dict[int, asyncio.Task[None]] = {}

    async def serve(self, reader: asyncio.StreamReader) -> None:
        async for line in lines(reader):
            try:
                message = json.loads(line)
                op, identifier = message["op"], int(message["id"])
            except (ValueError, KeyError, TypeError):
                logger.error("unreadable line from the parent: %r", line[:200])
                continue
            if op == "run":
                _learn(self._runtime, message.get("me"))
                task = asyncio.create_task(
                    self._run(identifier, str(message.get("kind")), message.get("kwargs") or {})
                )
                self._tasks[identifier] = task
                task.add_done_callback(functools.partial(self._forget, identifier))
            elif op == "cancel" and identifier in self._tasks:
                self._tasks[identifier].cancel()
            elif op == "ping" and not self._writer.is_closing():
                self._writer.write(encode({"op": "pong", "id": identifier}))
        # The parent closed the socket (it is stopping, or gone): nothing waits for these.
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def _forget(self, identifier: int, _task: asyncio.Task[None]) -> None:
        self._tasks.pop(identifier, None)

    async def _run(self, identifier: int, kind: str, kwargs: dict[str, Any]) -> None:
        try:
            result = await _dispatch(self._runtime, kind, kwargs)
            answer = {"op": "done", "id": identifier, "result": result}
        except Exception as error:
            with log_context(job_id=f"{kind}:{kwargs.get('channel')}:{kwargs.get('thread_ts')}"):
                logger.exception("%s job failed in the worker", kind)
            answer = {"op": "failed", "id": identifier, "error": f"{type(error).__name__}: {error}"}
        if not self._writer.is_closing():
            self._writer.write(encode(answer))


async def _tell_when_loaded(writer: asyncio.StreamWriter, *imports: asyncio.Task[None]) -> None:
    await asyncio.wait(imports)
    if not writer.is_closing():
        writer.write(encode({"op": "loaded", "id": 0}))


async def main(fd: int) -> None:
    settings = load_settings()
    setup_logging(level=settings.LOG_LEVEL, fmt=settings.LOG_FORMAT)
    # A few jobs at a time: PostgreSQL plans with 20 connections keep room for the web process.
    engine = create_engine(settings.DATABASE_URL, connections=4)
    if engine.dialect.name == "sqlite":
        # Every statement its own transaction (the worker's writes are single statements): a
        # transaction spanning turns of this busy, lower-priority event loop would hold
        # SQLite's one write lock for tens of milliseconds, and the web process's commits,
        # waiting on it with SQLite's growing sleeps, would take seconds to acknowledge.
        engine = engine.execution_options(isolation_level="AUTOCOMMIT")
        # Nor may a statement outlive its turn: one with RETURNING keeps the lock until its
        # rows are fetched, one more turn of the loop later. New rows' ids come from
        # lastrowid instead (the ORM asks the dialect).
        dialect = engine.sync_engine.dialect
        dialect.insert_returning = dialect.update_returning = dialect.delete_returning = False
    runtime = build_runtime(settings, engine)
    llm_module.preload()
    # As inline mode does: LiteLLM's objects out of the collector's way once imported. (Full
    # collections of 0.13 - 0.28 s were still seen in this process under bench.ack.)
    freezing = asyncio.create_task(freeze_after_litellm())
    # Its first "on it" sign and Slack call should not wait for slack-sdk's import either.
    loading = asyncio.create_task(load_slack_sdk())
    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd))
    # Until then the parent keeps quick work (the "on it" sign) to itself: an import holds
    # this interpreter's lock for seconds.
    telling = asyncio.create_task(_tell_when_loaded(writer, freezing, loading))
    logger.info("job worker ready (pid %d)", os.getpid())
    try:
        await Worker(runtime, writer).serve(reader)
    finally:
        telling.cancel()
        freezing.cancel()
        loading.cancel()
        writer.close()
        await runtime.on_it.close()
        await runtime.slack.close()
        await runtime.directory.close()
        runtime.builder.close()
        await engine.dispose()
        logger.info("job worker stopped")


def run() -> None:
    for name in (signal.SIGTERM, signal.SIGINT):
        signal.signal(name, signal.SIG_IGN)
    asyncio.run(main(int(sys.argv[1])))
    # Everything is closed. Exit now rather than wait for the interpreter's teardown, which
    # waits for a LiteLLM import still running on its thread (seconds the parent's stop,
    # within the platform's grace after SIGTERM, would spend waiting for this process).
    logging.shutdown()
    os._exit(0)


if __name__ == "__main__":
    # Run as `python -m`, this file is the module `__main__`: import it under its own name and
    # run that, so its log lines are named app.jobs.worker like every other module's.
    from app.jobs import worker

    worker.run()
