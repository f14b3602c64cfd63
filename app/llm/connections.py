"""LiteLLM's HTTP clients, closed at a stop.

LiteLLM keeps the HTTP clients it makes (an OpenAI SDK client, a search provider's handler)
in a cache of its own, one per event loop, for ten minutes or more, with their connections
open for the next call. It closes one it drops only from the event loop that made it, so once
that loop has ended the client's open sockets are left to the garbage collector (a
ResourceWarning, minutes later, wherever a collection happens to run). A process outlives its
event loop when it runs several lives of tomo: the test suite runs hundreds, the offline
replay one per run. So a stop closes them all and empties the cache: a process has one event
loop at a time, and the next call makes a new client.
"""

from __future__ import annotations

import contextlib
import inspect

from app.llm.client import litellm_module, loaded


async def close_connections() -> None:
    """Close every HTTP client LiteLLM holds and forget them (nothing if it was never
    imported); call it where no model call is under way, at a stop."""
    if not loaded():
        return
    litellm = await litellm_module()
    cache = litellm.in_memory_llm_clients_cache
    for client in list(cache.cache_dict.values()):
        close = getattr(client, "aclose", None) or getattr(client, "close", None)
        if close is None:
            continue
        with contextlib.suppress(Exception):  # one of an ended loop: closed as far as it can be
            closing = close()
            if inspect.isawaitable(closing):
                await closing
    cache.flush_cache()
