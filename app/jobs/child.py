"""The job worker's side of the socket (app.jobs.protocol): it runs each job its parent sends
with the handler for its kind, and answers with the result; the parent's "cancel" cancels it.
The process around it is app.wiring.worker."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from app.jobs.backend import Handler
from app.jobs.heap import give_back
from app.jobs.kinds import JobKind
from app.jobs.protocol import Op, encode, lines
from app.observability.logs import log_context
from app.slack.identity import Identity

logger = logging.getLogger(__name__)


def _learn(worker: Child, me: dict[str, Any] | None) -> None:
    """Who tomo is, as the parent knows it now: it may have learnt the user id from an event
    first and the bot id from auth.test later, so each job's snapshot replaces the last."""
    identity = worker.identity
    if me and me.get("user_id") and me != identity.snapshot():
        identity.know(
            user_id=me["user_id"],
            bot_id=me.get("bot_id"),
            team_id=me.get("team_id"),
            url=me.get("url"),
        )


class Child:
    def __init__(
        self,
        *,
        handlers: Mapping[JobKind, Handler],
        identity: Identity,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.identity = identity
        self._handlers = handlers
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
            if op == Op.RUN:
                _learn(self, message.get("me"))
                task = asyncio.create_task(
                    self._run(identifier, str(message.get("kind")), message.get("kwargs") or {})
                )
                self._tasks[identifier] = task
                task.add_done_callback(functools.partial(self._forget, identifier))
            elif op == Op.CANCEL and identifier in self._tasks:
                self._tasks[identifier].cancel()
            elif op == Op.PING and not self._writer.is_closing():
                self._writer.write(encode({"op": Op.PONG, "id": identifier}))
        # The parent closed the socket (it is stopping, or gone): nothing waits for these.
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    def _forget(self, identifier: int, _task: asyncio.Task[None]) -> None:
        self._tasks.pop(identifier, None)
        if not self._tasks:
            give_back()  # idle: what the jobs freed goes back to the system

    async def _run(self, identifier: int, kind: str, kwargs: dict[str, Any]) -> None:
        try:
            result = await self._handlers[JobKind(kind)](**kwargs)
            answer = {"op": Op.DONE, "id": identifier, "result": result}
        except asyncio.CancelledError:
            # Its claim let go: the parent hands the job back to the queue only now.
            if not self._writer.is_closing():
                self._writer.write(encode({"op": Op.CANCELLED, "id": identifier}))
            raise
        except Exception as error:
            with log_context(job_id=f"{kind}:{kwargs.get('channel')}:{kwargs.get('thread_ts')}"):
                logger.exception("%s job failed in the worker", kind)
            answer = {
                "op": Op.FAILED,
                "id": identifier,
                "error": f"{type(error).__name__}: {error}",
            }
        if not self._writer.is_closing():
            self._writer.write(encode(answer))
