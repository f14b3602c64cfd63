"""A database tomo cannot reach at start-up stops `uvicorn app.main:app` with one short block
naming DATABASE_URL, its password hidden, as the settings errors do (no traceback)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import make_url

from app.db.reachable import DatabaseUnreachable, open_database
from tests.test_settings import SLACK, run_uvicorn


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_uvicorn_with_no_database_server_says_so_in_one_block(tmp_path: Path) -> None:
    url = f"postgresql://tomo:hunter2@127.0.0.1:{closed_port()}/tomo"
    result = run_uvicorn(tmp_path, **SLACK, DATABASE_URL=url)
    assert result.returncode == 3  # uvicorn's status for a start-up that failed
    assert "Traceback" not in result.stderr and "hunter2" not in result.stderr
    errors = result.stderr[result.stderr.index("ERROR:") :].splitlines()
    assert errors[0] == "ERROR:    tomo cannot start: the database cannot be reached:"
    assert errors[1] == f"  DATABASE_URL: {url.replace('hunter2', '***')}"
    assert "refused" in errors[2].lower()
    assert errors[-1] == "ERROR:    Application startup failed. Exiting."
    assert len(errors) == 5


def test_uvicorn_with_a_sqlite_folder_it_cannot_make_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the database's folder would be")
    result = run_uvicorn(tmp_path, **SLACK, DATABASE_URL=f"sqlite:///{blocker}/data/tomo.db")
    assert result.returncode == 3 and "Traceback" not in result.stderr
    assert "tomo cannot start: the database cannot be reached:" in result.stderr
    assert "that its folder can be written." in result.stderr


async def test_a_database_that_refuses_is_named_without_its_password(
    postgres_url: str | None,
) -> None:
    if postgres_url is None:
        pytest.skip("needs PostgreSQL (TOMO_TEST_DATABASE_URL)")
    url = make_url(postgres_url).set(password="hunter2", database="no_such_database_here")
    missing = url.render_as_string(hide_password=False)
    with pytest.raises(DatabaseUnreachable) as stopped:
        await open_database(missing)
    lines = str(stopped.value).splitlines()
    assert lines[0] == "tomo cannot start: the database refuses the connection:"
    assert lines[1] == f"  DATABASE_URL: {url.render_as_string(hide_password=True)}"
    assert lines[2] == '  database "no_such_database_here" does not exist'
    assert "hunter2" not in str(stopped.value)
