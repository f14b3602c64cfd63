"""A small HTTP/1.1 keep-alive load generator: N connections, signed at send time.

Closed loop (`saturate`): every connection sends its next request as soon as the previous one
is answered. Open loop (`fixed_rate`): requests are due at a fixed rate whatever the server
does, and latency counts from when a request was due, so a slow server is not hidden.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.events import Delivery, sign


@dataclass
class Result:
    statuses: list[int]  # per delivery, 0 = no answer
    latencies: list[float] = field(default_factory=list)  # seconds, answered requests
    elapsed: float = 0.0
    sent: int = 0

    @property
    def answered(self) -> int:
        return sum(1 for s in self.statuses if s)

    @property
    def rate(self) -> float:
        return self.answered / self.elapsed if self.elapsed else 0.0


class Connection:
    def __init__(self, host: str, port: int, path: str) -> None:
        self._host, self._port, self._path = host, port, path
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post(self, body: bytes) -> int:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self._host, self._port)
        assert self._reader is not None
        stamp, signature = sign(body)
        head = (
            f"POST {self._path} HTTP/1.1\r\nHost: {self._host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"X-Slack-Request-Timestamp: {stamp}\r\nX-Slack-Signature: {signature}\r\n\r\n"
        )
        self._writer.write(head.encode() + body)
        header = await self._reader.readuntil(b"\r\n\r\n")
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "transfer-encoding":
                raise RuntimeError("chunked responses are not supported by this client")
        if length:
            await self._reader.readexactly(length)
        return status

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            try:
                await self._writer.wait_closed()
            except OSError:
                pass
            self._writer = None


async def saturate(
    port: int, deliveries: Sequence[Delivery], *, connections: int, path: str = "/slack/events"
) -> Result:
    result = Result(statuses=[0] * len(deliveries))
    cursor = iter(range(len(deliveries)))

    async def worker() -> None:
        connection = Connection("127.0.0.1", port, path)
        try:
            for index in cursor:
                sent = time.perf_counter()
                result.sent += 1
                result.statuses[index] = await connection.post(deliveries[index].body)
                result.latencies.append(time.perf_counter() - sent)
        except (OSError, asyncio.IncompleteReadError):
            return  # the server went away (the crash test kills it): no answer, status 0
        finally:
            await connection.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    result.elapsed = time.perf_counter() - started
    return result


async def fixed_rate(
    port: int,
    deliveries: Sequence[Delivery],
    *,
    rate: float,
    connections: int,
    path: str = "/slack/events",
) -> Result:
    result = Result(statuses=[0] * len(deliveries))
    due: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()

    async def worker() -> None:
        connection = Connection("127.0.0.1", port, path)
        try:
            while (item := await due.get()) is not None:
                index, due_at = item
                result.sent += 1
                result.statuses[index] = await connection.post(deliveries[index].body)
                result.latencies.append(time.perf_counter() - due_at)
        finally:
            await connection.close()

    workers = [asyncio.create_task(worker()) for _ in range(connections)]
    started = time.perf_counter()
    for index in range(len(deliveries)):
        due_at = started + index / rate
        delay = due_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        due.put_nowait((index, due_at))
    for _ in workers:
        due.put_nowait(None)
    await asyncio.gather(*workers)
    result.elapsed = time.perf_counter() - started
    return result
