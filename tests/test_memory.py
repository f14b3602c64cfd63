"""What keeps tomo's memory within a 512 MB container (docs/BENCHMARKS.md#memory): LiteLLM
counts no tokens itself (tiktoken's encodings would cost the job worker about 100 MB), and
the job worker starts with two malloc arenas and a fixed mmap threshold, and each file read
gives its freed memory back."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from app.db.engine import create_engine
from app.db.migrate import PROJECT_ROOT, SCHEMA_HEAD, current_revision
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


WEB_PROCESS = """
import asyncio, sys
from app.db.engine import create_engine
from app.wiring.build import build_runtime
from app.wiring.lifespan import migrate
from app.settings import Settings

async def main() -> None:
    settings = Settings(
        _env_file=None, DATABASE_URL=sys.argv[1], JOB_WORKER="process",
        SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="secret",
    )
    engine = create_engine(settings.DATABASE_URL)
    await migrate(settings, engine)  # a new database: every migration runs
    runtime = build_runtime(settings, engine)
    await runtime.close()

import app.main  # noqa
asyncio.run(main())
print(" ".join(sorted(sys.modules)))
"""

# What the job worker needs and the web process does not: pictures, documents and pages,
# the model's libraries, the prompts' templates; what migrates (done by a child process);
# and Procrastinate with psycopg under it, which the migrations need on PostgreSQL only.
JOBS_ONLY = ("PIL", "pypdf", "httpx", "trafilatura", "litellm", "openai", "jinja2")
MIGRATING = ("alembic", "mako", "pygments")
POSTGRESQL_ONLY = ("procrastinate", "psycopg")


async def test_the_web_process_does_not_load_what_only_jobs_or_postgresql_need(
    tmp_path: Path,
) -> None:
    """The web process on SQLite, with its job worker apart (the default), migrated a new
    database and wired: none of the job worker's libraries, nor Procrastinate's, stay in its
    memory (about 18 MiB of PSS: docs/BENCHMARKS.md#memory)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WEB_PROCESS,
        f"sqlite:///{tmp_path / 'tomo.db'}",
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, err.decode()[-2000:]
    loaded = {name.split(".")[0] for name in out.decode().split()}
    assert "sqlalchemy" in loaded
    assert sorted(loaded & {*JOBS_ONLY, *MIGRATING, *POSTGRESQL_ONLY}) == []
    engine = create_engine(f"sqlite:///{tmp_path / 'tomo.db'}")
    try:
        assert await current_revision(engine) == SCHEMA_HEAD  # migrated all the same
    finally:
        await engine.dispose()
