"""What keeps tomo's memory within a 512 MB container (docs/BENCHMARKS.md#memory): LiteLLM
counts no tokens itself (tiktoken's encodings would cost the job worker about 100 MB), and
the job worker starts with two malloc arenas."""

from __future__ import annotations

from pathlib import Path

from app.jobs.heap import _malloc_trim, give_back
from app.llm.client import litellm_module
from tests.conftest import StartTomo, wait_for


async def test_litellm_counts_no_tokens_itself() -> None:
    litellm = await litellm_module()
    assert litellm.disable_token_counter is True
    assert litellm.token_counter(model="gpt-4o-mini", text="several words here") == 0


async def test_the_job_worker_starts_with_two_malloc_arenas(start_tomo: StartTomo) -> None:
    async with start_tomo(JOB_WORKER="process") as tomo:
        worker = tomo.runtime.worker
        assert worker is not None
        await wait_for(lambda: worker.pid is not None, timeout=60, what="the job worker")
        environment = _environment(worker.pid)
    assert b"MALLOC_ARENA_MAX=2" in environment


def _environment(pid: int | None) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def test_the_idle_job_worker_gives_freed_memory_back() -> None:
    """glibc's malloc_trim is found (this machine, as Heroku's and Cloud Run's, runs glibc)
    and returns a freed 64 MiB allocation's pages: the process's PSS shrinks."""
    assert _malloc_trim() is not None
    before = _pss()
    chunks = [bytearray(64 * 1024) for _ in range(1024)]  # below mmap's threshold: the heap
    above = [bytearray(100) for _ in range(10)]  # the heap's top stays in use: free() alone
    grown = _pss()  # would return none of the pages below it
    del chunks
    freed = _pss()
    give_back()
    assert above and grown - before > 32
    assert freed - _pss() > 32


def _pss() -> float:
    rollup = Path("/proc/self/smaps_rollup").read_text().split("Pss:")[1]
    return int(rollup.split()[0]) / 1024
