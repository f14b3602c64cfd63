"""What keeps tomo's memory within a 512 MB container (docs/BENCHMARKS.md#memory): LiteLLM
counts no tokens itself (tiktoken's encodings would cost the job worker about 100 MB), and
the job worker starts with two malloc arenas and a fixed mmap threshold, and each file read
gives its freed memory back."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.files import reading
from app.jobs.heap import _malloc_trim, give_back
from app.llm.client import litellm_module
from tests.conftest import StartTomo, wait_for


async def test_litellm_counts_no_tokens_itself() -> None:
    litellm = await litellm_module()
    assert litellm.disable_token_counter is True
    assert litellm.token_counter(model="gpt-4o-mini", text="several words here") == 0


async def test_the_job_worker_starts_with_two_malloc_arenas_and_a_fixed_mmap_threshold(
    start_tomo: StartTomo,
) -> None:
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = tomo.runtime.worker
        assert worker is not None
        await wait_for(lambda: worker.pid is not None, timeout=60, what="the job worker")
        environment = _environment(worker.pid)
    assert b"MALLOC_ARENA_MAX=2" in environment
    assert b"MALLOC_MMAP_THRESHOLD_=1048576" in environment


def _environment(pid: int | None) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def test_the_idle_job_worker_can_give_freed_memory_back() -> None:
    """glibc's malloc_trim is found and answers (this machine, as Heroku's and Cloud Run's,
    runs glibc). What it gives back depends on the heap's state; bench.busy_day measures it
    (docs/BENCHMARKS.md#memory)."""
    trim = _malloc_trim()
    assert trim is not None
    assert trim(0) in (0, 1)  # 1: memory was released, 0: there was none to release
    give_back()


def test_each_file_read_gives_the_heaps_free_pages_back(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[str] = []
    monkeypatch.setattr(reading, "give_back", lambda: given.append("back"))
    assert reading.read_now(lambda x: x * 2, 21) == 42
    with pytest.raises(ValueError):
        reading.read_now(int, "not a number")
    assert given == ["back", "back"]  # after a failed read too
