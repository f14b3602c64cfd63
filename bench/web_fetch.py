"""fetch_url's memory: the proportional set size (PSS) of a process shaped like the job worker
(LiteLLM loaded, as the worker has it once it has answered) before, during and after it reads
the largest pages the tool can meet.

    .venv/bin/python -m bench.web_fetch

The pages are served on 127.0.0.1 by tests/fakes/web_pages.py from this process; the fetch
runs in a child process, sampled every 10 ms from /proc/PID/smaps_rollup (Linux). Pages: a
50 MB HTML page (fetch_url reads its first 5 MB and hands the first megabyte to trafilatura:
the worst case, since that tree is the largest thing it builds), a gzip bomb (100 MB of zeros
in about 100 KB), a short gzip stream followed by 64 MiB of junk (read until the stream ends:
`cpu` is the process's CPU seconds for the page) and a 30-page PDF. Last line:
`web_fetch baseline_pss_mib=N peak_pss_mib=N after_pss_mib=N`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from bench.common import machine

PAGES = ("/huge", "/bomb", "/gzip-junk", "/doc.pdf")


def pss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no Pss line")


def child(base: str) -> None:
    """The worker-shaped process: load LiteLLM, then fetch each page, printing PSS."""
    from app.llm.client import _load
    from app.settings import Settings
    from app.tools.fetch_url import FetchUrlTool
    from app.tools.kit import Kit
    from tests.tools.kit import asker

    _load()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        SLACK_SIGNING_SECRET="s",
        SLACK_BOT_TOKEN="xoxb-bench",
        FETCH_PRIVATE_ADDRESSES=True,
    )
    kit = Kit(settings=settings, engine=None, slack=None, identity=None, llm=None, scopes=None)  # type: ignore[arg-type]
    tool = FetchUrlTool(kit)
    print(f"ready {pss_mib(os.getpid()):.1f}", flush=True)
    sys.stdin.readline()
    for path in PAGES:
        started, cpu = time.perf_counter(), time.process_time()
        result = asyncio.run(
            tool.run({"url": base + path}, asker=asker("C1", given=(base + path,)))
        )
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"page {path} ok={result.ok} chars={len(result.text)} s={seconds:.2f} cpu={cpu:.2f}",
            flush=True,
        )
    print("done", flush=True)
    sys.stdin.readline()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child)
        return
    from tests.fakes.web_pages import FakeWeb, gzip_bomb

    print(machine())
    gzip_bomb()
    with FakeWeb() as web:
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.web_fetch", "--child", web.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdin is not None and process.stdout is not None
        baseline = float(process.stdout.readline().split()[1])
        peak, stop = [baseline], threading.Event()

        def sample() -> None:
            while not stop.is_set():
                try:
                    peak.append(pss_mib(process.pid))
                except (OSError, RuntimeError):
                    return
                time.sleep(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        process.stdin.write("\n")
        process.stdin.flush()
        for line in iter(process.stdout.readline, ""):
            if line.startswith("done"):
                break
            print(line.rstrip(), f"(peak so far {max(peak):.1f} MiB)")
        stop.set()
        sampler.join()
        after = pss_mib(process.pid)
        process.stdin.write("\n")
        process.stdin.flush()
        process.wait(timeout=30)
    print(
        f"baseline {baseline:.1f} MiB, peak {max(peak):.1f} MiB "
        f"(+{max(peak) - baseline:.1f}), after {after:.1f} MiB"
    )
    print(
        f"web_fetch baseline_pss_mib={baseline:.0f} peak_pss_mib={max(peak):.0f} "
        f"after_pss_mib={after:.0f}"
    )


if __name__ == "__main__":
    main()
