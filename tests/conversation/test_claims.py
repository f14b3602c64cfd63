"""Claims (docs/how-tomo-works.md#reply): whatever ends the work on a claim, it is never left
`claimed`; an owed claim is taken over once, with what it had stored."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from app.conversation.claims import ending, taking
from app.conversation.claims.taking import Claim
from app.db.engine import create_engine
from app.db.migrate import upgrade_to_head


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await upgrade_to_head(engine)
    yield engine
    await engine.dispose()


async def new_claim(engine: AsyncEngine, trigger: str = "1700000000.000100") -> Claim:
    claim = await taking.claim(
        engine, channel="C1", thread_ts=trigger, trigger_ts=trigger, reason="mention"
    )
    assert claim is not None
    return claim


async def status_of(engine: AsyncEngine, claim_id: int) -> str:
    async with engine.connect() as connection:
        found = await connection.execute(text(f"SELECT status FROM reply WHERE id = {claim_id}"))
        return str(found.scalar_one())


async def test_a_failure_before_anything_was_stored_ends_the_claim(engine: AsyncEngine) -> None:
    claim = await new_claim(engine)
    with pytest.raises(RuntimeError):
        async with ending.held(engine, claim.id):
            raise RuntimeError("the template broke")
    assert await status_of(engine, claim.id) == "failed"
    assert (
        await taking.claim(
            engine,
            channel="C1",
            thread_ts=claim.trigger_ts,
            trigger_ts=claim.trigger_ts,
            reason="x",
        )
        is None
    )  # ended: never answered again


async def test_a_failure_after_the_messages_were_stored_leaves_it_owed_and_uncertain(
    engine: AsyncEngine,
) -> None:
    claim = await new_claim(engine)
    await ending.store_chunks(engine, claim.id, ["part one", "part two"])
    with pytest.raises(OSError):
        async with ending.held(engine, claim.id):
            raise OSError("the database went away mid-post")
    assert await status_of(engine, claim.id) == "uncertain"
    assert await taking.owed(engine, channel="C1", thread_ts=claim.thread_ts) == [claim.id]
    taken = await taking.take_over(engine, claim.id)
    assert taken is not None and taken.chunks == ["part one", "part two"] and taken.error is None
    assert await taking.take_over(engine, claim.id) is None  # once


async def test_a_cancelled_job_leaves_it_interrupted(engine: AsyncEngine) -> None:
    claim = await new_claim(engine)

    async def job() -> None:
        async with ending.held(engine, claim.id):
            await asyncio.sleep(10)

    task = asyncio.create_task(job())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert await status_of(engine, claim.id) == "interrupted"
    again = await taking.claim(
        engine, channel="C1", thread_ts=claim.trigger_ts, trigger_ts=claim.trigger_ts, reason="x"
    )
    assert again is not None and again.id == claim.id and again.chunks is None


async def posting(
    engine: AsyncEngine, *, error: str | None = None
) -> tuple[Claim, asyncio.Future[str], asyncio.Task[None]]:
    """A job on a claim whose post is on its way to Slack (settled by setting the future)."""
    claim = await new_claim(engine)
    await ending.store_chunks(engine, claim.id, ["hello"], error=error)
    post: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def job() -> None:
        async with ending.held(engine, claim.id, in_flight=lambda: post):
            await asyncio.shield(post)

    task = asyncio.create_task(job())
    await asyncio.sleep(0.05)
    return claim, post, task


async def test_while_a_post_is_in_flight_the_claim_stays_taken_until_it_settles(
    engine: AsyncEngine,
) -> None:
    """A cancelled job (its instance's grace is over) ends once its post has settled and its
    claim is owed: a job handed back to the queue then finds the claim to take over."""
    claim, post, task = await posting(engine, error="reply call failed")
    task.cancel()
    await asyncio.sleep(0.2)
    assert not task.done()  # the job waits for its post
    assert await status_of(engine, claim.id) == "claimed"  # nobody may take it over yet
    assert await taking.take_over(engine, claim.id) is None
    post.set_result("1700000001.000200")
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await status_of(engine, claim.id) == "interrupted"  # as the job ends, not later
    taken = await taking.take_over(engine, claim.id)
    assert taken is not None and taken.chunks == ["hello"]
    assert taken.error == "reply call failed"  # still known to be the apology


async def test_cancelled_again_while_its_post_is_in_flight_the_claim_is_let_go_when_it_settles(
    engine: AsyncEngine,
) -> None:
    claim, post, task = await posting(engine)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert await status_of(engine, claim.id) == "claimed"
    post.set_result("1700000001.000200")
    for _ in range(100):
        if await status_of(engine, claim.id) != "claimed":
            break
        await asyncio.sleep(0.02)
    assert await status_of(engine, claim.id) == "interrupted"
