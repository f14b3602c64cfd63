"""What every tool is: a name, a schema of its arguments, a line that says what it is doing,
and a run that turns arguments into a bounded text result for the model."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol

from app.tools.given import GivenUrls

# What one result may hold, in characters: enough to answer from, small enough for a prompt.
RESULT_CHARS = 6000


@dataclass(frozen=True)
class Asker:
    """Where the reply being written will be posted, and for whom: what a tool may show
    depends on it (app.gate.scope), never on what the model asks."""

    team_id: str | None
    channel: str
    thread_ts: str
    # The person the reply answers; None for a reply tomo makes on its own.
    user_id: str | None
    # The reply's claim: a reply run again after a restart has the same one, so what a tool
    # writes (a note) is written once.
    claim_id: int
    # The URLs given in this reply (people's messages, the tools' results): the only ones
    # fetch_url requests. Empty unless the reply fills it: nothing is fetched.
    given: GivenUrls = field(default_factory=GivenUrls, compare=False, repr=False)


@dataclass(frozen=True)
class ToolResult:
    """What the model reads back, and where it came from (permalinks, URLs) to show as the
    sources of the reply's progress."""

    text: str
    ok: bool = True
    sources: tuple[str, ...] = field(default=())
    # The line the reply ends with, whatever the model writes, and no tool round after this
    # one: the call waits for a person's decision (app.tools.mcp.approvals).
    last_line: str | None = None

    def bounded(self, limit: int = RESULT_CHARS) -> ToolResult:
        if len(self.text) <= limit:
            return self
        return replace(self, text=self.text[: limit - 1] + "…")


def failed(text: str) -> ToolResult:
    """A result that tells the model the call did not work, and why; the reply goes on."""
    return ToolResult(text=f"error: {text}", ok=False)


class Tool(Protocol):
    """One tool. `parameters` is the JSON schema of its arguments, as OpenAI's function
    calling takes it (LiteLLM carries it to other providers)."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]]

    def progress(self, arguments: dict[str, Any]) -> str:
        """What the person sees while it runs ("Searching messages for …")."""
        ...

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult: ...
