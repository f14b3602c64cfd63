"""Memory through a busy day, as a container counts it: the sum of the PSS of the server and
its job worker, idle after the first replies and at the day's peak.

    .venv/bin/python -m bench.busy_day
    .venv/bin/python -m bench.busy_day --conversations 40
    .venv/bin/python -m bench.busy_day --mcp

tomo runs as `uvicorn app.main:app` on the default settings (its job worker a process of its
own, SQLite, METRICS_TOKEN set so its metrics count too, every tool offered to replies) with
short waits, against the stand-ins of bench/standins.py served beside a file and page host;
web_search goes to the stand-ins' SearXNG (WEB_SEARCH_PROVIDER=searxng) and fetch_url may reach
the host on 127.0.0.1 (FETCH_PRIVATE_ADDRESSES=true). The day, compressed: people talk in
channels (each conversation is judged after MIN_WAIT_SECONDS=0.5) and in a thread, mention tomo
in others (replies), and five mentions make the model call each tool once
(bench/busy_day_tools.py: search_messages finds the thread, read_thread reads it, note writes a
note, fetch_url reads a 3.6 MB HTML page, web_search asks SearXNG); then they share the largest
pictures that are still read (bench.images.TOGETHER at the limit, and two 8000x8000 RGBA PNGs)
and a PDF whose pages inflate to 70 MB each, and the five tool mentions come again while those
are read; once every reply is done, a last mention. The memory refresh runs every 5 seconds
over what they wrote. PSS is sampled every 0.2 s throughout, of the server and of its job
worker apart too. The run fails unless every tool round happened and returned what it was sent
for, as the model stand-in saw the results and as tomo's log says.
With --mcp, MCP_SERVERS names an MCP server on 127.0.0.1 (bench/mcp_server.py, built with the
official SDK) and each tool round calls its `tracker__search_issues` too, so the job worker
carries the MCP SDK and its client's calls. Last line: `busy_day idle_pss_mib=N peak_pss_mib=M`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from bench import busy_day_tools, standins
from bench.common import (
    free_port,
    machine,
    pss_mib,
    rss_mib,
    running,
    tomo_env,
    uvicorn,
    wait_idle,
    wait_ready,
)
from bench.events import mention, plain
from bench.images import TOGETHER, at_the_limit, hostile, pdf_bomb
from bench.loadgen import Connection
from bench.standin_calls import Calls
from bench.web_page import handbook_page

FILES = Path(os.environ.get("TOMO_BENCH_FILES", "."))  # where `host` finds the files
CALLS_PER_TOOL = 2  # each tool is called once among the talk, once while the files are read


async def _file(request: Request) -> Response:
    name = Path(request.path_params["name"]).name
    kind = "application/pdf" if name.endswith(".pdf") else "image/png"
    return Response((FILES / name).read_bytes(), media_type=kind)


async def _page(request: Request) -> Response:
    """A web page for fetch_url, as a site serves it."""
    name = Path(request.path_params["name"]).name
    return Response((FILES / name).read_bytes(), media_type="text/html; charset=utf-8")


host = Starlette(
    routes=[
        Route("/files/{name}", _file),
        Route("/pages/{name}", _page),
        Mount("/", app=standins.app),
    ]
)


class Sampler:
    """The family's PSS (and RSS) every 0.2 s on a thread: the peak of each, and the peaks of
    the server and of its job worker apart (each at its own moment), with the part of the day
    (`phase`) the family's peak came in."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak_pss, self.peak_rss = pid, 0.0, 0.0
        self.peak_server, self.peak_worker = 0.0, 0.0
        self.phase, self.peak_phase = "", ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            server, family = pss_mib(self.pid), pss_mib(self.pid, family=True)
            if family > self.peak_pss:
                self.peak_pss, self.peak_phase = family, self.phase
            self.peak_server = max(self.peak_server, server)
            self.peak_worker = max(self.peak_worker, family - server)
            self.peak_rss = max(self.peak_rss, rss_mib(self.pid, family=True))


def _file_object(port: int, name: str, size: int, n: int) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}/files/{name}"
    pdf = name.endswith(".pdf")
    return {
        "id": f"F{n:05d}",
        "name": name if pdf else f"{name}.png",
        "title": name,
        "mimetype": "application/pdf" if pdf else "image/png",
        "filetype": "pdf" if pdf else "png",
        "size": size,
        "mode": "hosted",
        "url_private": url,
        "url_private_download": url,
    }


def _with_files(body: bytes, files: list[dict[str, Any]]) -> bytes:
    envelope = json.loads(body)
    envelope["event"]["files"] = files
    if envelope["event"]["type"] == "message":
        envelope["event"]["subtype"] = "file_share"
    return json.dumps(envelope).encode()


async def _send(port: int, bodies: list[bytes]) -> None:
    """One connection per batch: uvicorn closes one left idle while the day waits for posts."""
    connection = Connection("127.0.0.1", port, "/slack/events")
    try:
        for body in bodies:
            assert await connection.post(body) == 200
    finally:
        await connection.close()


async def day(
    port: int,
    tomo_port: int,
    files: dict[str, bytes],
    conversations: int,
    *,
    calls: Calls,
    sampler: Sampler,
    tools: tuple[str, ...] = busy_day_tools.TOOLS,
) -> None:
    base = time.time()
    calls.read()
    posts = calls.posts
    sampler.phase = "the talk and the first tool rounds"
    parent, thread = busy_day_tools.the_thread(base)
    await _send(tomo_port, thread)
    for n in range(conversations):
        # People talking among themselves (judged after the quiet time), and in another
        # channel someone asking tomo (a mention in the same conversation would be answered
        # instead of judged).
        talk = [
            plain(f"CTALK{n:03d}", f"{base + n + k / 100:.6f}", user=f"U{k:04d}") for k in range(4)
        ]
        await _send(tomo_port, [d.body for d in talk])
        await _send(tomo_port, [d.body for d in mention(f"CASK{n % 10:03d}", f"{base + n:.6f}")])
    rounds = len(tools)
    asked = busy_day_tools.rounds(port, parent, first_channel=2, ts=time.time(), tools=tools)
    await _send(tomo_port, asked)
    posts += conversations + rounds
    await calls.until_posts(posts)
    sampler.phase = "the files shared, and the second tool rounds"
    pictures = [name for name in files if not name.endswith((".pdf", ".html"))]
    for n, name in enumerate([*pictures, "bomb.pdf"]):
        shared = [_file_object(port, name, len(files[name]), n)]
        ts = f"{base + conversations + n:.6f}"
        bodies = [_with_files(d.body, shared) for d in mention(f"CFILE{n:03d}", ts)]
        await _send(tomo_port, bodies)
    asked = busy_day_tools.rounds(port, parent, first_channel=12, ts=time.time(), tools=tools)
    await _send(tomo_port, asked)
    posts += len(pictures) + 1 + rounds
    await calls.until_posts(posts)
    await calls.until_finished(posts)
    sampler.phase = "the last reply and memory refreshes"
    await _send(tomo_port, [d.body for d in mention("CALL", f"{time.time():.6f}")])
    await calls.until_posts(posts + 1)


async def main(args: argparse.Namespace) -> None:
    print(machine())
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-busy-day-"))
    files = {f"limit_{k}": at_the_limit(k) for k in TOGETHER}
    files |= {f"huge{n}": hostile("png_rgba") for n in (1, 2)}
    files["bomb.pdf"] = pdf_bomb()
    files[busy_day_tools.PAGE] = handbook_page()
    for name, data in files.items():
        (workdir / name).write_bytes(data)
    port = free_port()
    env = {**os.environ, "TOMO_BENCH_FILES": str(workdir)}
    stand = uvicorn("bench.busy_day:host", port=port, env=env, log=workdir / "s.log")
    tools, mcp = busy_day_tools.TOOLS, {}
    if args.mcp:
        tools = (*tools, busy_day_tools.MCP_TOOL)
        mcp_port = free_port()
        server = {"name": "tracker", "url": f"http://127.0.0.1:{mcp_port}/mcp"}
        server |= {"tools": ["search_issues"], "approve": []}
        mcp = {"MCP_SERVERS": json.dumps([server])}
        tracker = uvicorn(
            "bench.mcp_server:app", port=mcp_port, env=env, flags=(), log=workdir / "mcp.log"
        )
    with running(stand), running(tracker) if args.mcp else contextlib.nullcontext():
        wait_ready(stand, f"http://127.0.0.1:{port}/api/auth.test")
        url = f"http://127.0.0.1:{port}"
        settings = tomo_env(
            database_url=f"sqlite:///{workdir / 'tomo.db'}",
            slack_url=f"{url}/api/",
            model_url=f"{url}/v1",
            MIN_WAIT_SECONDS="0.5",
            FOLLOW_UP_WAIT_SECONDS="0.5",
            MEMORY_UPDATE_INTERVAL_SECONDS="5",
            METRICS_TOKEN="bench-metrics",
            FETCH_PRIVATE_ADDRESSES="true",  # the page is on this machine's loopback
            WEB_SEARCH_PROVIDER="searxng",
            WEB_SEARCH_API_BASE=url,
            **mcp,
        )
        tomo_port, calls = free_port(), Calls(port, tools=tools)
        tomo = uvicorn("app.main:app", port=tomo_port, env=settings, log=workdir / "tomo.log")
        with running(tomo):
            wait_ready(tomo, f"http://127.0.0.1:{tomo_port}/healthz")
            if args.mcp:
                _wait_mcp(tomo_port)
            wait_idle(tomo.pid)
            for n in range(3):  # the first replies
                await _send(tomo_port, [d.body for d in mention("CWARM", f"{time.time():.6f}")])
                await calls.until_posts(n + 1)
            wait_idle(tomo.pid)
            idle_pss, idle_rss = pss_mib(tomo.pid, family=True), rss_mib(tomo.pid, family=True)
            print(
                f"idle after the first replies: PSS {idle_pss:.0f} MiB (RSS {idle_rss:.0f}): "
                f"the server {pss_mib(tomo.pid):.0f}, its job worker "
                f"{idle_pss - pss_mib(tomo.pid):.0f}"
            )
            with Sampler(tomo.pid) as sampler:
                started = time.monotonic()
                await day(
                    port,
                    tomo_port,
                    files,
                    args.conversations,
                    calls=calls,
                    sampler=sampler,
                    tools=tools,
                )
                await calls.until_judged(args.conversations + 1)  # and the thread
                await asyncio.sleep(6)  # a memory refresh over the day's messages
                wait_idle(tomo.pid)
            after = pss_mib(tomo.pid, family=True)
            calls.read()
            tools = calls.tools.check(CALLS_PER_TOOL, workdir / "tomo.log")
            pictures = len(files) - 2  # the PDF and the page are not pictures
            print(
                f"the day ({args.conversations} conversations of 4 messages and a mention, "
                f"a thread, {pictures} pictures and a PDF, tool rounds, memory refreshes) in "
                f"{time.monotonic() - started:.0f} s: peak PSS {sampler.peak_pss:.0f} MiB "
                f"(peak RSS {sampler.peak_rss:.0f}) during {sampler.peak_phase}; the server's "
                f"own peak {sampler.peak_server:.0f} MiB, its job worker's "
                f"{sampler.peak_worker:.0f}; idle after it {after:.0f} MiB"
            )
            print(f"tool rounds that returned what they were sent for: {tools}")
    print(f"(logs in {workdir})")
    print(f"busy_day idle_pss_mib={idle_pss:.0f} peak_pss_mib={sampler.peak_pss:.0f}")


def _wait_mcp(tomo_port: int, timeout: float = 120.0) -> None:
    """Until /healthz says tomo's job worker found the MCP server answering."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"http://127.0.0.1:{tomo_port}/healthz", timeout=5) as answer:
            if json.load(answer).get("mcp", {}).get("tracker") == "ok":
                return
        time.sleep(0.5)
    raise RuntimeError("the MCP server was never found answering")


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="an MCP server configured (bench/mcp_server.py) and its tool called in each round",
    )
    asyncio.run(main(parser.parse_args()))


if __name__ == "__main__":
    run()
