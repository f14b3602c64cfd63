"""With MCP_SERVERS set, the web process still speaks no MCP (docs/tools.md#mcp): it reads the
servers' state from the database for /healthz and `/tomo tools`, and the job worker alone
imports the MCP SDK (and httpx2 under it). Its memory is measured (SPEC §3.23)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from app.db.migrate import PROJECT_ROOT

WEB_PROCESS = """
import asyncio, sys
from app.db.engine import create_engine
from app.wiring.build import build_runtime
from app.wiring.lifespan import migrate
from app.settings import Settings

async def main() -> None:
    settings = Settings(
        _env_file=None, DATABASE_URL=sys.argv[1], JOB_WORKER="process",
        SLACK_BOT_TOKEN="xoxb-test", SLACK_SIGNING_SECRET="secret", MCP_SERVERS=sys.argv[2],
    )
    assert settings.mcp_servers
    engine = create_engine(settings.DATABASE_URL)
    await migrate(settings, engine)
    runtime = build_runtime(settings, engine)
    await runtime.restore_timers()
    await runtime.close()

import app.main  # noqa
import app.routes.health, app.commands.tools, app.conversation.approval.decisions  # noqa
asyncio.run(main())
print(" ".join(sorted(sys.modules)))
"""


async def test_the_web_process_with_mcp_servers_imports_no_mcp(tmp_path: Path) -> None:
    servers = json.dumps([{"name": "jira", "url": "http://127.0.0.1:9/mcp", "tools": ["a"]}])
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        WEB_PROCESS,
        f"sqlite:///{tmp_path / 'tomo.db'}",
        servers,
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT_ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=180)
    assert process.returncode == 0, err.decode()[-2000:]
    loaded = {name.split(".")[0] for name in out.decode().split()}
    assert "app" in loaded
    assert sorted(loaded & {"mcp", "mcp_types", "httpx2", "httpx", "litellm"}) == []
