"""The notebook's two tools: `note` writes something worth remembering down, `forget_note`
removes a note. Where a note belongs (app.memory.notebook) and who may see it
(app.context.notes) follow from the conversation the reply is posted in (the asker), never
from the arguments."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from app.memory import notebook
from app.tools.base import Asker, ToolResult, failed
from app.tools.kit import Kit

USER_ID = re.compile(r"^[UW][A-Z0-9]{1,31}$")
MAX_ABOUT = 10


class NoteTool:
    name: ClassVar[str] = "note"
    description: ClassVar[str] = (
        "Write down something worth remembering from this conversation (who likes what, a "
        "date someone mentioned, a promise). Notes written in a public channel can be seen "
        "in every conversation; notes written anywhere else stay in this conversation."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "text": {
                "type": "string",
                "description": f"The note, at most {notebook.NOTE_CHARS} characters.",
            },
            "importance": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "default": 3,
                "description": "1 (trivia) to 5 (must not be forgotten).",
            },
            "about": {
                "type": ["array", "null"],
                "items": {"type": "string"},
                "description": "Slack user ids of the people the note is about.",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        return "Writing a note"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        text = " ".join(str(arguments.get("text") or "").split())
        if not text:
            return failed("a note needs some text")
        if len(text) > notebook.NOTE_CHARS:
            return failed(f"a note is at most {notebook.NOTE_CHARS} characters; shorten it")
        importance = arguments.get("importance", 3)
        if isinstance(importance, bool) or not isinstance(importance, int):
            return failed("importance is a whole number from 1 to 5")
        if not 1 <= importance <= 5:
            return failed("importance is from 1 to 5")
        about = arguments.get("about") or []
        if not isinstance(about, list) or not all(
            isinstance(a, str) and USER_ID.match(a) for a in about
        ):
            return failed("about is a list of Slack user ids (like U0123ABCD)")
        if len(about) > MAX_ABOUT:
            return failed(f"about names at most {MAX_ABOUT} people")
        # Where a guest or a person of another organisation reads, a note stays there.
        scope = await self._kit.scopes.for_asker(asker)
        written = await notebook.write(
            self._kit.engine,
            shared=scope.public,
            team_id=asker.team_id or "",
            channel=asker.channel,
            claim_id=asker.claim_id,
            text=text,
            importance=importance,
            about=sorted(set(about)),
        )
        where = (
            "every conversation may see it"
            if written.note.scope == notebook.WORKSPACE
            else "only this conversation will see it"
        )
        said = "noted" if written.new else "already noted"
        return ToolResult(text=f"{said} (note {written.note.id}; {where})")


class ForgetNoteTool:
    name: ClassVar[str] = "forget_note"
    description: ClassVar[str] = (
        "Remove a note that is no longer true or wanted, by the id shown with it."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"id": {"type": "integer", "description": "The note's id."}},
        "required": ["id"],
        "additionalProperties": False,
    }

    def __init__(self, kit: Kit) -> None:
        self._kit = kit

    def progress(self, arguments: dict[str, Any]) -> str:
        return "Removing a note"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        note_id = arguments.get("id")
        if isinstance(note_id, str):
            note_id = _number(note_id)
        if isinstance(note_id, bool) or not isinstance(note_id, int):
            return failed("id is a note's number")
        scope = await self._kit.scopes.for_asker(asker)
        removed = await notebook.remove(self._kit.engine, note_id=note_id, scope=scope)
        if not removed:
            return failed(f"no note {note_id} here (it is gone, or not this conversation's)")
        return ToolResult(text=f"note {note_id} removed")


def _number(text: str) -> int | None:
    """A note's number written as text ("12"), or None: not only digits ("²" is a digit that
    int() refuses), or too many of them for int()."""
    if not text.strip().isdecimal():
        return None
    try:
        return int(text)
    except ValueError:
        return None
