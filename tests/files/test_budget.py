"""The bytes of files held at once (app.files.budget): within the bound, whatever comes."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from app.files.budget import ByteBudget


async def _hold_all(budget: ByteBudget, sizes: list[int]) -> list[int]:
    """Hold each size at once from its own task; what was held whenever one was inside."""
    seen: list[int] = []

    async def hold(size: int) -> None:
        async with budget.holding(size):
            seen.append(budget.held)
            await asyncio.sleep(0)
            seen.append(budget.held)

    await asyncio.gather(*(hold(size) for size in sizes))
    return seen


@settings(deadline=None)
@given(st.lists(st.integers(0, 40), max_size=12))
def test_whatever_is_held_at_once_stays_within_the_whole(sizes: list[int]) -> None:
    budget = ByteBudget(24)
    seen = asyncio.run(_hold_all(budget, sizes))
    assert len(seen) == 2 * len(sizes)  # every one was let in, in the end
    assert all(held <= 24 for held in seen)
    assert budget.held == 0


async def test_small_files_are_held_together_and_a_large_one_alone() -> None:
    budget = ByteBudget(24)
    assert max(await _hold_all(budget, [8, 8, 8])) == 24  # all three at once
    seen = await _hold_all(budget, [30, 8])
    assert seen == [24, 24, 8, 8]  # the large one, clamped to the whole, then the small one
