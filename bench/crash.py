"""Durability: kill -9 tomo while it acknowledges events; every 200 must be in the database.

    .venv/bin/python -m bench.crash               # 5 crashes, SQLite file
    .venv/bin/python -m bench.crash --rounds 10 --database-url postgresql://USER@HOST/EMPTY_DB

Each round starts `uvicorn app.main:app` on the same database, saturates it with signed events
over 50 connections, and sends SIGKILL at a random moment while requests are in flight (no
shutdown, no flush). Then, with the server dead, every delivery that got its 200 is looked up:
its event id in seen_event and its message in message. Slack and the model are dead ports.
Last line: `crash rounds=N acknowledged=N lost=N`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import text

from app.db.engine import create_engine
from bench import loadgen
from bench.common import free_port, machine, stop, tomo_env, uvicorn, wait_ready
from bench.events import Delivery, Workspace


async def missing(database_url: str, deliveries: Sequence[Delivery], statuses: list[int]) -> int:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            ids = await connection.execute(text("SELECT event_id FROM seen_event"))
            seen = set(ids.scalars())
            rows = await connection.execute(text("SELECT channel, ts FROM message"))
            messages = {(row[0], row[1]) for row in rows}
    finally:
        await engine.dispose()
    return sum(
        1
        for delivery, status in zip(deliveries, statuses, strict=True)
        if status == 200
        and (delivery.event_id not in seen or (delivery.channel, delivery.ts) not in messages)
    )


async def crash_once(env: dict[str, str], deliveries: list[Delivery], log: Path) -> loadgen.Result:
    """What the load generator saw (status 0: no answer) when the server was killed."""
    port = free_port()
    process = uvicorn("app.main:app", port=port, env=env, log=log)
    try:
        await asyncio.to_thread(wait_ready, process, f"http://127.0.0.1:{port}/healthz")
        load = asyncio.create_task(loadgen.saturate(port, deliveries, connections=50))
        await asyncio.sleep(random.uniform(0.5, 1.5))
        stop(process, kill=True)
        return await load
    finally:
        stop(process, kill=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--database-url", help="default: a fresh SQLite file")
    args = parser.parse_args()
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-crash-"))
    database_url = args.database_url or f"sqlite:///{workdir / 'tomo.db'}"
    dead = f"http://127.0.0.1:{free_port()}"
    env = tomo_env(database_url=database_url, slack_url=f"{dead}/api/", model_url=f"{dead}/v1")
    workspace = Workspace()
    acknowledged = lost = 0
    for round_ in range(args.rounds):
        deliveries = workspace.deliveries(20_000)  # more than a round can send
        result = await crash_once(env, deliveries, workdir / "tomo.log")
        ok = sum(s == 200 for s in result.statuses)
        gone = await missing(database_url, deliveries, result.statuses)
        print(
            f"round {round_ + 1}: killed after {ok} acknowledged events, "
            f"{result.sent - result.answered} requests in flight got no answer; "
            f"{gone} of the acknowledged missing"
        )
        acknowledged += ok
        lost += gone
    print(f"crash rounds={args.rounds} acknowledged={acknowledged} lost={lost}")


if __name__ == "__main__":
    asyncio.run(main())
