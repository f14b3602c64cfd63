"""Memory of a running tomo reading the pictures of a mention, as the issue sent them.

    .venv/bin/python -m bench.image_upload

tomo runs as `uvicorn app.main:app` (the Procfile's flags: its job worker a process of its
own; SQLite; `LLM_VISION=true`) against the stand-ins of bench/standins.py, served here beside
a file host (`host` below, on the same port, as Slack's file host is reached through
SLACK_API_URL's host in tests). Each mention carries pictures made by bench.images: two
8000x8000 RGBA PNGs of 258 KB (the issue's two small pictures), then the four largest
pictures of bench.images.TOGETHER that are still read. After tomo has posted its reply, the
growth of the job worker's peak RSS (VmHWM) since it was idle is printed, and the whole
family's RSS. Last line: `image_upload worst_mib=N`.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from bench import standins
from bench.common import (
    children,
    free_port,
    machine,
    rss_mib,
    running,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)
from bench.events import mention
from bench.images import TOGETHER, at_the_limit, hostile
from bench.loadgen import Connection

FILES = Path(os.environ.get("TOMO_BENCH_FILES", "."))  # where `host` finds the pictures


async def _file(request: Request) -> Response:
    name = Path(request.path_params["name"]).name
    return Response((FILES / name).read_bytes(), media_type="image/png")


host = Starlette(routes=[Route("/files/{name}", _file), Mount("/", app=standins.app)])


def _peak_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text().split("VmHWM:")[1]
    return int(status.split()[0]) / 1024


def _with_files(body: bytes, files: list[dict[str, Any]]) -> bytes:
    """A mention's delivery carrying these files, as Slack sends a message that shares them."""
    envelope = json.loads(body)
    envelope["event"]["files"] = files
    if envelope["event"]["type"] == "message":
        envelope["event"]["subtype"] = "file_share"
    return json.dumps(envelope).encode()


async def _mention(port: int, channel: str, files: list[dict[str, Any]]) -> None:
    connection = Connection("127.0.0.1", port, "/slack/events")
    try:
        for delivery in mention(channel, f"{time.time():.6f}"):
            assert await connection.post(_with_files(delivery.body, files)) == 200
    finally:
        await connection.close()


async def _answered(port: int, tomo_port: int, channel: str, files: list[dict[str, Any]]) -> None:
    """Mention tomo with these files and wait for its reply (two minutes at most)."""
    await _mention(tomo_port, channel, files)
    deadline = time.monotonic() + 120
    while _posts(port) == 0 and time.monotonic() < deadline:  # noqa: ASYNC110 (polled)
        await asyncio.sleep(0.2)


def _posts(port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/calls", timeout=5) as answer:
        calls = json.load(answer)["calls"]
    return sum(1 for call in calls if call["method"] == "chat.postMessage")


def _file_object(port: int, name: str, size: int, n: int) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}/files/{name}"
    return {
        "id": f"F{n:04d}",
        "name": f"{name}.png",
        "title": name,
        "mimetype": "image/png",
        "filetype": "png",
        "size": size,
        "mode": "hosted",
        "url_private": url,
        "url_private_download": url,
    }


async def main() -> None:
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-image-upload-"))
    messages = {
        "two 8000x8000 RGBA PNGs": {f"huge{n}": hostile("png_rgba") for n in (1, 2)},
        "the four largest still read": {f"limit_{k}": at_the_limit(k) for k in TOGETHER},
    }
    for pictures in messages.values():
        for name, data in pictures.items():
            (workdir / name).write_bytes(data)
    port = free_port()
    env = {**os.environ, "TOMO_BENCH_FILES": str(workdir)}
    stand = uvicorn("bench.image_upload:host", port=port, env=env, log=workdir / "s.log")
    worst = 0.0
    with running(stand):
        wait_ready(stand, f"http://127.0.0.1:{port}/api/auth.test")
        url = f"http://127.0.0.1:{port}"
        tomo_port = free_port()
        settings = tomo_env(
            database_url=f"sqlite:///{workdir / 'tomo.db'}",
            slack_url=f"{url}/api/",
            model_url=f"{url}/v1",
            LLM_VISION="true",
        )
        tomo = uvicorn("app.main:app", port=tomo_port, env=settings, log=workdir / "tomo.log")
        with running(tomo):
            wait_ready(tomo, f"http://127.0.0.1:{tomo_port}/healthz")
            wait_idle(tomo.pid)
            (worker,) = children(tomo.pid)
            _posts(port)  # forget the calls of the start
            await _answered(port, tomo_port, "CWARM", [])  # LiteLLM loaded, a reply composed
            wait_idle(tomo.pid)
            family = rss_mib(tomo.pid, family=True)
            print(f"after a first reply: job worker {rss_mib(worker):.0f} MiB, family {family:.0f}")
            for n, (label, pictures) in enumerate(messages.items()):
                before = _peak_mib(worker)
                files = [
                    _file_object(port, name, len(data), 10 * n + i)
                    for i, (name, data) in enumerate(pictures.items())
                ]
                await _answered(port, tomo_port, f"C{n:04d}", files)
                grown = _peak_mib(worker) - before
                worst = max(worst, grown)
                print(
                    f"{label}: job worker's peak +{grown:.0f} MiB; family now "
                    f"{rss_mib(tomo.pid, family=True):.0f} MiB"
                )
    print(f"(logs in {workdir})")
    print(f"image_upload worst_mib={worst:.0f}")


if __name__ == "__main__":
    asyncio.run(main())
