"""What the web process and its job worker say to each other over their socket pair.

One JSON object a line:
  parent → child  {"op": "run", "id": 7, "kind": "reply", "kwargs": {...}, "me": {...}}
                  {"op": "cancel", "id": 7}
                  {"op": "ping", "id": 0}
  child → parent  {"op": "done", "id": 7, "result": ...}   {"op": "failed", "id": 7, "error": "..."}
                  {"op": "cancelled", "id": 7}   (the job stopped on the parent's cancel)
                  {"op": "pong", "id": 0}
                  {"op": "loaded", "id": 0}   (once, when its libraries are imported)
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Any

logger = logging.getLogger(__name__)


class Op(StrEnum):
    """What a line says (its "op")."""

    RUN = "run"
    CANCEL = "cancel"
    PING = "ping"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    PONG = "pong"
    LOADED = "loaded"


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


async def lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The other side's lines until it closes the socket, or the socket fails: a line written
    just as the other side went away ends the reading with an error (EPIPE, ECONNRESET)
    rather than with EOF, and that is the same end."""
    while True:
        try:
            line = await reader.readline()
        except (ConnectionError, OSError) as error:
            logger.info("job socket closed: %s", error)
            return
        if not line:
            return
        yield line
