"""bench.busy_day's tool rounds: a thread to find, mentions that make the model stand-in call
each tool (bench/standin_tools.py), and the check that every round happened and returned.

The thread is people's talk in a public channel (C0001, which users.conversations lists);
each round is a mention in a public channel of its own whose text says `use tool:NAME
ARGUMENT`: search_messages for words of the thread, read_thread of its permalink, note,
fetch_url of a 3.6 MB page the benchmark's host serves on 127.0.0.1 (bench/web_page.py), and
web_search through the SearXNG stand-in on 127.0.0.1.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from bench.events import mention, plain
from bench.standins import WORKSPACE_URL
from bench.web_page import OPENING

TOOLS = ("search_messages", "read_thread", "note", "fetch_url", "web_search")
# With --mcp: an MCP server's tool too (bench/mcp_server.py), offered as server__tool.
MCP_TOOL = "tracker__search_issues"
THREAD_CHANNEL = "C0001"
QUERY = "offsite roadmap"
SEARCHED = "spring offsite venues"
PAGE = "handbook.html"
# What each tool's result must hold for its round to count: the tool found what it was sent for.
FOUND = {
    "search_messages": "in the wiki under Planning",  # the thread's reply, not the mention
    "read_thread": "the venue is decided on Thursday",
    "note": "noted",
    "fetch_url": OPENING,
    "web_search": f"{SEARCHED} — result 1",
    MCP_TOOL: "PROJ-12: Review the offsite roadmap",
}
_THREAD = (
    "Where is the offsite roadmap? I'd like to review it before Friday.",
    "The offsite roadmap is in the wiki under Planning, next to the budget.",
    "Thanks! Is the venue in it yet?",
    "Not yet, the venue is decided on Thursday.",
)


def the_thread(base: float) -> tuple[str, list[bytes]]:
    """A thread of the day in a public channel: its parent's ts, and its messages' bodies."""
    parent = f"{base - 30:.6f}"
    bodies = [plain(THREAD_CHANNEL, parent, user="U0100", text=_THREAD[0]).body]
    for n, text in enumerate(_THREAD[1:], start=1):
        ts = f"{base - 30 + n:.6f}"
        bodies.append(plain(THREAD_CHANNEL, ts, thread_ts=parent, user=f"U010{n}", text=text).body)
    return parent, bodies


def rounds(
    port: int, parent: str, *, first_channel: int, ts: float, tools: tuple[str, ...] = TOOLS
) -> list[bytes]:
    """One mention per tool, each in a public channel of its own (C0002 on from
    `first_channel`), as Slack writes links in a message's text: `<https://…>`."""
    link = f"{WORKSPACE_URL}archives/{THREAD_CHANNEL}/p{parent.replace('.', '')}"
    arguments = {
        "search_messages": QUERY,
        "read_thread": f"<{link}>",
        "note": "The spring offsite roadmap is reviewed on Friday.",
        "fetch_url": f"<http://127.0.0.1:{port}/pages/{PAGE}>",
        "web_search": SEARCHED,
        MCP_TOOL: QUERY,
    }
    bodies = []
    for n, tool in enumerate(tools):
        channel = f"C{first_channel + n:04d}"
        text = f"can you help? use tool:{tool} {arguments[tool]}"
        bodies += [d.body for d in mention(channel, f"{ts + n / 1000:.6f}", text=text)]
    return bodies


class ToolTally:
    """The tool rounds as the model stand-in saw them (its GET /calls): the calls it asked
    for, and the results handed back to it, per tool."""

    def __init__(self, tools: tuple[str, ...] = TOOLS) -> None:
        self.tools = tools
        self.called: Counter[str] = Counter()
        self.returned: Counter[str] = Counter()
        self.wrong: list[str] = []  # results that were errors or lacked what was sought

    def add(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            tool = str(call.get("tool"))
            if call["method"] == "tool_call":
                self.called[tool] += 1
            elif call["method"] == "tool_result":
                text = str(call.get("text"))
                if call.get("ok") and FOUND.get(tool, "\0") in text:
                    self.returned[tool] += 1
                else:
                    self.wrong.append(f"{tool}: {text[:300]!r}")

    def check(self, rounds: int, log: Path) -> str:
        """Raises unless every tool was called `rounds` times and each call returned what it
        was sent for, as the stand-in saw it and as tomo's log says (`tool NAME (claim N):
        ok`); the tally as a line otherwise."""
        logged = Counter(re.findall(r"\btool (\w+) \(claim \d+\): ok,", log.read_text()))
        problems = [f"wrong results: {'; '.join(self.wrong)}"] if self.wrong else []
        for tool in self.tools:
            seen = (self.called[tool], self.returned[tool], logged[tool])
            if seen != (rounds, rounds, rounds):
                problems.append(
                    f"{tool}: {seen[0]} calls, {seen[1]} good results, {seen[2]} logged ok "
                    f"(expected {rounds} each)"
                )
        if problems:
            raise RuntimeError("tool rounds did not all happen: " + " | ".join(problems))
        return ", ".join(f"{tool} {self.returned[tool]}" for tool in self.tools)
