"""The tool calls a model answers with, in OpenAI's function-calling shape (which LiteLLM
gives for every provider it carries tools to).

A whole answer has them in `message.tool_calls`: each `{"id", "type": "function",
"function": {"name", "arguments"}}`, `arguments` a JSON string the model wrote. A streamed
answer sends them in pieces in `delta.tool_calls`: each piece has the `index` of the call it
belongs to; the first piece of a call carries its `id` and `function.name`, later ones only
more characters of `function.arguments` (OpenAI's chat streaming reference; LiteLLM hands
them on as `ChatCompletionDeltaToolCall`s, and its own stream_chunk_builder joins them the
same way, by index).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it: not yet known to be valid

    def as_dict(self) -> dict[str, Any]:
        """The call as an assistant message carries it back to the model."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def _field(thing: Any, name: str) -> Any:
    if isinstance(thing, dict):
        return thing.get(name)
    return getattr(thing, name, None)


def calls_of(message: Any) -> tuple[ToolCall, ...]:
    """The tool calls of a whole answer's message (none when it has none)."""
    found: list[ToolCall] = []
    for number, call in enumerate(_field(message, "tool_calls") or []):
        function = _field(call, "function")
        found.append(
            ToolCall(
                id=str(_field(call, "id") or f"call_{number}"),
                name=str(_field(function, "name") or ""),
                arguments=str(_field(function, "arguments") or ""),
            )
        )
    return tuple(found)


@dataclass
class _Parts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class StreamedCalls:
    """Joins the pieces of a streamed answer's tool calls, by their index."""

    def __init__(self) -> None:
        self._calls: dict[int, _Parts] = {}

    def feed(self, delta: Any) -> None:
        for piece in _field(delta, "tool_calls") or []:
            index = _field(piece, "index")
            number = int(index) if isinstance(index, int) else len(self._calls)
            parts = self._calls.setdefault(number, _Parts())
            if _field(piece, "id"):
                parts.id = str(_field(piece, "id"))
            function = _field(piece, "function")
            if function is None:
                continue
            if _field(function, "name"):
                parts.name = str(_field(function, "name"))
            if _field(function, "arguments"):
                parts.arguments.append(str(_field(function, "arguments")))

    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(
            ToolCall(
                id=parts.id or f"call_{number}",
                name=parts.name,
                arguments="".join(parts.arguments),
            )
            for number, parts in sorted(self._calls.items())
        )


def assistant_turn(text: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The assistant message that asked for `calls`, as the next round's prompt repeats it."""
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [call.as_dict() for call in calls],
    }


def tool_turn(call: ToolCall, result: str) -> dict[str, Any]:
    """What one call returned, as the model reads it back."""
    return {"role": "tool", "tool_call_id": call.id, "content": result}
