"""Streamed replies: how soon the first words reach Slack, and what streaming costs.

    .venv/bin/python -m bench.stream            # 10 mentions streamed, 10 posted whole
    .venv/bin/python -m bench.stream --quick    # 4 of each

tomo runs as `uvicorn app.main:app` (the Procfile's flags, the job worker process, SQLite)
against the test suite's Slack and model stand-ins (tests/fakes, real HTTP on 127.0.0.1; they
note when each call arrives). The model writes at a set pace: its first piece after
`--first` seconds, then one every `--every` seconds (`--size` characters each). Mentions go one
after another, each a new top-level mention, first with STREAM_REPLIES=auto, then with
STREAM_REPLIES=false (the model's answer then comes whole after the same writing time).
Figures per reply:
- model → Slack: from the model stand-in sending its first piece to chat.startStream
  arriving at the Slack stand-in (target ≤ 300 ms);
- ack → first text: from the mention's acknowledgement to that start (streamed), or to the
  post (whole);
- Slack calls per reply (chat.* calls);
- total: from the acknowledgement to the reply complete in Slack (the stop, or the post);
  streamed against whole (target: at most 5 % slower); and from the model's answer complete to
  the reply complete (what tomo adds after the model, either way).
Last line: `stream model_to_slack_p50_ms=A p99_ms=B ack_to_text_p50_ms=C whole_ack_to_text_p50_ms=D
calls_per_reply=E total_p50_ms=F whole_total_p50_ms=G slower_pct=H`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.common import (
    free_port,
    load_after,
    machine,
    median,
    percentile,
    running,
    tomo_env,
    uvicorn,
    wait_ready,
)
from bench.onit import acknowledge, summary

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fakes import FakeModel, FakeSlack

_base = int(time.time()) - 60


class Reply:
    def __init__(self, ack: float) -> None:
        self.ack = ack
        self.model_first: float | None = None
        self.model_done: float | None = None  # the model's answer complete
        self.first_text: float | None = None
        self.done: float | None = None
        self.calls = 0


async def one_reply(
    port: int, slack: FakeSlack, model: FakeModel, *, n: int, streamed: bool, answer: str
) -> Reply:
    channel, ts = f"C{n:04d}", f"{_base}.{n:06d}"
    slack.add_channel(channel, f"bench-{n}")
    before = len(slack.timed_calls())
    starts_before, answered_before = len(model.stream_starts), len(model.answered)
    model.enqueue(answer)
    if not streamed:  # the whole answer comes after the same writing time
        pace = model.pace
        model.delay(pace.first + pace.every * (len(pace.cut(answer)) - 1))
    reply = Reply(await acknowledge(port, channel, ts, clock=time.monotonic))
    finish = "chat.stopStream" if streamed else "chat.postMessage"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        calls = [c for c in slack.timed_calls()[before:] if c[2].get("channel") == channel]
        done = [at for at, method, _ in calls if method == finish]
        if done:
            first = "chat.startStream" if streamed else "chat.postMessage"
            reply.first_text = min(at for at, method, _ in calls if method == first)
            reply.done = done[0]
            reply.calls = sum(1 for _, method, _ in calls if method.startswith("chat."))
            break
        await asyncio.sleep(0.05)
    if streamed and len(model.stream_starts) > starts_before:
        reply.model_first = model.stream_starts[starts_before]
    if len(model.answered) > answered_before:
        reply.model_done = model.answered[answered_before]
    return reply


def ms(values: Sequence[float | None]) -> list[float]:
    return [v * 1e3 for v in values if v is not None]


async def main(args: argparse.Namespace) -> None:
    print(machine())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    workdir = Path(tempfile.mkdtemp(prefix="tomo-bench-stream-"))
    answer = ("The quick brown fox jumps over the lazy dog. " * 40)[: args.length]
    results: dict[bool, list[Reply]] = {}
    with FakeSlack() as slack, FakeModel() as model:
        slack.app_id = "A0BENCH"  # bench.events' app
        slack.reset()
        model.pace.first, model.pace.every, model.pace.size = args.first, args.every, args.size
        print(
            f"model: first piece after {args.first * 1e3:.0f} ms, then one every "
            f"{args.every * 1e3:.0f} ms of {args.size} characters; {len(answer)} characters "
            f"({len(model.pace.cut(answer))} pieces)"
        )
        for streamed in (True, False):
            port = free_port()
            env = tomo_env(
                database_url=f"sqlite:///{workdir / f'tomo-{streamed}.db'}",
                slack_url=slack.url,
                model_url=model.api_base,
                STREAM_REPLIES="auto" if streamed else "false",
                LLM_TIMEOUT_SECONDS="60",
            )
            tomo = uvicorn("app.main:app", port=port, env=env, log=workdir / "tomo.log")
            with running(tomo):
                # Healthy; its first reply (not counted) waits for the job worker to load.
                url = f"http://127.0.0.1:{port}/healthz"
                await asyncio.to_thread(wait_ready, tomo, url, timeout=120)
                replies = []
                for n in range(args.mentions + 1):  # the first one warms the worker up
                    number = n + (0 if streamed else 1000)
                    reply = await one_reply(
                        port, slack, model, n=number, streamed=streamed, answer=answer
                    )
                    if n:
                        replies.append(reply)
                results[streamed] = replies
    report(results, workdir)


def report(results: dict[bool, list[Reply]], workdir: Path) -> None:
    streamed, whole = results[True], results[False]
    to_slack = ms(
        [r.first_text - r.model_first for r in streamed if r.first_text and r.model_first]
    )
    ack_text = ms([r.first_text - r.ack for r in streamed if r.first_text])
    whole_text = ms([r.first_text - r.ack for r in whole if r.first_text])
    total = ms([r.done - r.ack for r in streamed if r.done])
    whole_total = ms([r.done - r.ack for r in whole if r.done])
    calls = median([float(r.calls) for r in streamed if r.done])
    tail = ms([r.done - r.model_done for r in streamed if r.done and r.model_done])
    whole_tail = ms([r.done - r.model_done for r in whole if r.done and r.model_done])
    print(summary("model's first piece -> first text in Slack (streamed)", to_slack))
    print(summary("acknowledgement -> first text in Slack (streamed)", ack_text))
    print(summary("acknowledgement -> the reply in Slack (posted whole)", whole_text))
    print(summary("acknowledgement -> reply complete (streamed)", total))
    print(summary("acknowledgement -> reply complete (posted whole)", whole_total))
    print(summary("model's answer complete -> reply complete (streamed)", tail))
    print(summary("model's answer complete -> reply complete (posted whole)", whole_tail))
    print(f"Slack chat.* calls per streamed reply: median {calls:.0f}")
    missing = sum(1 for r in streamed + whole if r.done is None)
    print(f"replies not complete within 60 s: {missing} (logs in {workdir})")
    print(load_after())
    slower = (median(total) / median(whole_total) - 1) * 100 if total and whole_total else 0.0
    print(
        f"stream model_to_slack_p50_ms={percentile(to_slack, 0.5):.0f} "
        f"p99_ms={percentile(to_slack, 0.99):.0f} "
        f"ack_to_text_p50_ms={percentile(ack_text, 0.5):.0f} "
        f"whole_ack_to_text_p50_ms={percentile(whole_text, 0.5):.0f} "
        f"calls_per_reply={calls:.0f} total_p50_ms={median(total):.0f} "
        f"whole_total_p50_ms={median(whole_total):.0f} slower_pct={slower:.1f}"
    )


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mentions", type=int, default=10, help="replies of each kind")
    parser.add_argument("--first", type=float, default=0.5, help="seconds to the first piece")
    parser.add_argument("--every", type=float, default=0.05, help="seconds between pieces")
    parser.add_argument("--size", type=int, default=12, help="characters per piece")
    parser.add_argument("--length", type=int, default=1200, help="characters per answer")
    parser.add_argument("--quick", action="store_true", help="4 replies of each kind")
    args = parser.parse_args(argv)
    if args.quick:
        args.mentions = 4
    return args


def run() -> None:
    asyncio.run(main(parse()))


if __name__ == "__main__":
    run()
