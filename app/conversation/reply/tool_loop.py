"""A reply's rounds of tool calls (docs/how-tomo-works.md#tools): the reply's prompt and the
tools go to the model; while it asks for tools, each call is run and its result handed back,
at most `max_rounds` times; then one last call (tools still described, so the prompt's start
stays the same, but `tool_choice: "none"`) makes it answer with what it has. The tools' work
is bounded (app.conversation.reply.tool_limits): `max_calls` a round, `seconds` a reply, after which
the model answers with what it has. What the calls return is given to the reply from the next
round on (app.tools.given: the URLs `fetch_url` may request). A call that asks for a person's
approval ends the tools: the model answers next, and the reply ends with the result's
`last_line` (that it waits for the decision), whatever the model wrote.

A call with an unknown name, arguments that are not a JSON object or lack a required key, or a
tool that raises, gets an error result: the reply goes on. Every round is a recorded model call
under the reply's claim. Nothing here posts: the text goes back to the reply, which formats and
posts (or streams) it like any answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from app.conversation.reply.tool_limits import MAX_CALLS, SECONDS, ToolRun, not_run
from app.llm import LLM
from app.llm.tool_calls import ToolCall, assistant_turn, tool_turn
from app.observability.metrics import count_tool_call
from app.tools.base import Asker, Tool, ToolResult, failed
from app.tools.registry import Toolbox

logger = logging.getLogger(__name__)

PURPOSE = "reply"


class TaskStatus(StrEnum):
    """A tool call's state, as Slack's `task_update` chunk names it."""

    IN_PROGRESS = "in_progress"
    COMPLETE = "complete"
    ERROR = "error"


@dataclass(frozen=True)
class Task:
    """One tool call as the person sees it while it runs."""

    id: str
    title: str
    status: TaskStatus
    sources: tuple[str, ...] = ()


# Shows the person what the tools are doing (task chunks in a stream, or the thread status).
Progress = Callable[[list[Task]], Awaitable[None]]


async def _shown_nowhere(tasks: list[Task]) -> None:
    return None


class ToolLoop:
    def __init__(
        self,
        *,
        llm: LLM,
        toolbox: Toolbox | None,
        max_rounds: int,
        max_calls: int = MAX_CALLS,
        seconds: float = SECONDS,
    ) -> None:
        self._llm = llm
        self._toolbox = toolbox
        self._max_rounds = max_rounds
        self._max_calls = max_calls
        self._seconds = seconds

    async def offered(self, asker: Asker) -> list[dict[str, Any]] | None:
        """The tools' definitions when this reply model may call them; None for none."""
        if not self._toolbox or self._max_rounds == 0:
            return None
        if not await self._llm.calls_functions(PURPOSE):
            return None
        return await self._toolbox.offered(asker.channel) or None

    async def complete(
        self, messages: list[dict[str, Any]], *, asker: Asker, progress: Progress | None = None
    ) -> str:
        """The reply's text, after the rounds of tool calls it asked for (LLMError: the model
        failed)."""
        tools = await self.offered(asker)
        messages = list(messages)
        run = ToolRun(asker, seconds=self._seconds)
        for round_number in range(self._max_rounds + 1):
            last = tools is None or round_number == self._max_rounds or _over(run)
            completion = await self._llm.complete(
                purpose=PURPOSE,
                messages=messages,
                tools=tools,
                tool_choice="none" if tools and last else None,
                reply_id=asker.claim_id,
            )
            if last or not completion.tool_calls:
                return _ending(completion.text, run.last_line)
            messages += await self._round(
                completion.text, completion.tool_calls, run, progress or _shown_nowhere
            )
        raise AssertionError("unreachable: the last round answers")

    async def stream(
        self, messages: list[dict[str, Any]], *, asker: Asker, progress: Progress | None = None
    ) -> AsyncGenerator[str, None]:
        """The reply's text as the model writes it, round after round: a round that turns
        into tool calls gives only the text that came before them (LLMError: the model
        failed)."""
        tools = await self.offered(asker)
        messages = list(messages)
        run = ToolRun(asker, seconds=self._seconds)
        said = ""  # the text so far, of every round
        for round_number in range(self._max_rounds + 1):
            last = tools is None or round_number == self._max_rounds or _over(run)
            calls: list[ToolCall] = []
            written: list[str] = []
            answer = self._llm.stream(
                purpose=PURPOSE,
                messages=messages,
                tools=tools,
                tool_choice="none" if tools and last else None,
                reply_id=asker.claim_id,
            )
            async with aclosing(answer) as pieces:
                async for piece in pieces:
                    if isinstance(piece, ToolCall):
                        calls.append(piece)
                        continue
                    if not written and said and not said[-1].isspace():
                        piece = "\n\n" + piece  # a new round's words start a new paragraph
                    written.append(piece)
                    said += piece
                    yield piece
            if last or not calls:
                if run.last_line is not None:
                    if closing := _ending(said, run.last_line)[len(said.rstrip()) :]:
                        yield closing
                return
            text = "".join(written).strip()
            messages += await self._round(text, tuple(calls), run, progress or _shown_nowhere)

    async def _round(
        self, text: str, calls: tuple[ToolCall, ...], run: ToolRun, progress: Progress
    ) -> list[dict[str, Any]]:
        """Run the calls of one round, in order, within the limits; the turns that tell the
        model their results. What they return is given from the next round on (the model
        wrote this round's calls before it saw any of it)."""
        asker = run.asker
        pairs = [(call, self._title(call)) for call in calls[: self._max_calls]]
        await _show(
            progress, [Task(call.id, title, TaskStatus.IN_PROGRESS) for call, title in pairs]
        )
        results: list[ToolResult] = []
        done: list[Task] = []
        for call, title in pairs:
            result = await run.within_time(self.run_call(call, asker), tool=self._label(call))
            logger.info(
                "tool %s (claim %d): %s, %d characters",
                call.name,
                asker.claim_id,
                "ok" if result.ok else "error",
                len(result.text),
            )
            results.append(result)
            status = TaskStatus.COMPLETE if result.ok else TaskStatus.ERROR
            done.append(Task(call.id, title, status, result.sources))
        for call in calls[self._max_calls :]:
            results.append(not_run(self._max_calls, tool=self._label(call)))
        for call, result in zip(calls, results, strict=True):
            if result.ok:
                asker.given.add_result(result.text, arguments=call.arguments)
            run.last_line = run.last_line or result.last_line
        await _show(progress, done)
        return [assistant_turn(text, calls)] + [
            tool_turn(call, result.text) for call, result in zip(calls, results, strict=True)
        ]

    def _label(self, call: ToolCall) -> str:
        """A call's tool as a metrics label: a name the model made up is "unknown"."""
        known = self._toolbox is not None and self._toolbox.get(call.name) is not None
        return call.name if known else "unknown"

    def _title(self, call: ToolCall) -> str:
        tool = self._toolbox.get(call.name) if self._toolbox else None
        arguments = _arguments(call)
        if tool is not None and isinstance(arguments, dict):
            try:
                return tool.progress(arguments)
            except Exception:
                logger.exception("tool %s could not say what it is doing", call.name)
        return f"Using {call.name or 'a tool'}"

    async def run_call(self, call: ToolCall, asker: Asker) -> ToolResult:
        """One call the model made: the tool's result, bounded, or an error result for an
        unknown name, arguments that are not a JSON object with the required keys, or a tool
        that raised. Never raises itself. Counted by tool and outcome
        (app.observability.metrics)."""
        tool = self._toolbox.get(call.name) if self._toolbox else None
        if tool is None:
            names = ", ".join(self._toolbox.tools) if self._toolbox else ""
            # A name the model made up is no label: it would grow the metrics without end.
            count_tool_call("unknown", "unknown_tool")
            return failed(f"there is no tool named {call.name!r}; the tools are: {names}")
        outcome, result = await self._run(tool, call, asker)
        count_tool_call(call.name, outcome)
        return result.bounded()

    async def _run(self, tool: Tool, call: ToolCall, asker: Asker) -> tuple[str, ToolResult]:
        arguments = _arguments(call)
        if arguments is None:
            return "bad_arguments", failed("the arguments are not valid JSON; send a JSON object")
        if not isinstance(arguments, dict):
            return "bad_arguments", failed("the arguments must be a JSON object")
        required = tool.parameters.get("required") or []
        missing = [key for key in required if key not in arguments]
        if missing:
            return "bad_arguments", failed(
                f"{call.name} needs the argument(s) {', '.join(missing)}"
            )
        try:
            result = await tool.run(arguments, asker=asker)
        except Exception as error:
            logger.exception("tool %s failed (claim %d)", call.name, asker.claim_id)
            return "error", failed(
                f"{call.name} failed ({type(error).__name__}); answer without it"
            )
        return ("ok" if result.ok else "failed"), result


def _over(run: ToolRun) -> bool:
    """No round of tools follows: their time is spent, or a call waits for a person."""
    return run.out_of_time or run.last_line is not None


def _ending(text: str, last_line: str | None) -> str:
    """The reply's text, ending with `last_line` (once) when a call waits for a person."""
    if last_line is None:
        return text
    text = text.rstrip()
    if text.endswith(last_line):
        return text
    return f"{text}\n\n{last_line}" if text else last_line


def _arguments(call: ToolCall) -> Any:
    """The call's arguments decoded (an empty string is no arguments); None: not JSON."""
    try:
        return json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return None


async def _show(progress: Progress, tasks: list[Task]) -> None:
    """Progress is shown as well as it can be; it never stops the reply."""
    try:
        await progress(tasks)
    except Exception:
        logger.exception("showing the tools' progress failed")
