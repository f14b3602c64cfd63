"""The `files` of a Slack message (an event, a conversations.history/replies answer, files.info)
as SharedFiles, and as the JSON the message row keeps of them.

A file object carries its id, name or title, mimetype, filetype, size, mode (`hosted`,
`snippet`, `external`, ...) and its download URLs (`url_private_download`, `url_private`).
A Slack Connect file the bot may not see yet comes as a stub: `{"id": ..., "mode":
"file_access", "file_access": "check_file_info"}`; files.info answers the rest.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, replace
from typing import Any

from app.domain import SharedFile

logger = logging.getLogger(__name__)

MAX_FILES = 20  # a message carries at most ten; more is no message of Slack's


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def shared_file(raw: Any) -> SharedFile | None:
    """One file object; None for what is not one (no id)."""
    if not isinstance(raw, dict):
        return None
    file_id = _string(raw.get("id"))
    if not file_id or len(file_id) > 32:
        return None
    size = raw.get("size")
    return SharedFile(
        id=file_id,
        name=_string(raw.get("name")) or _string(raw.get("title")) or "file",
        mimetype=_string(raw.get("mimetype")).lower(),
        filetype=_string(raw.get("filetype")).lower(),
        size=size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None,
        url=_string(raw.get("url_private_download")) or _string(raw.get("url_private")),
        mode=_string(raw.get("mode")),
        stub=raw.get("file_access") == "check_file_info",
    )


def shared_files(raw: Any) -> tuple[SharedFile, ...]:
    """A message's `files` list as SharedFiles (what is not a file object is left out)."""
    if not isinstance(raw, list):
        return ()
    files = (shared_file(item) for item in raw[:MAX_FILES])
    return tuple(file for file in files if file is not None)


def resolved(stub: SharedFile, answer: dict[str, Any]) -> SharedFile | None:
    """A stub completed from files.info's answer (`{"ok": true, "file": {...}}`)."""
    found = shared_file(answer.get("file"))
    if found is None or found.id != stub.id:
        return None
    return found


def files_json(files: tuple[SharedFile, ...]) -> str | None:
    """What the message row keeps (None for no files): ASCII JSON, so a name with a NUL or a
    lone surrogate (which the database refuses in text) is kept, escaped, like any other."""
    if not files:
        return None
    return json.dumps([asdict(file) for file in files])


def files_from_json(stored: str | None) -> tuple[SharedFile, ...]:
    """The row's files; an unreadable value is taken for none."""
    if not stored:
        return ()
    try:
        items = json.loads(stored)
        fields = SharedFile.__dataclass_fields__
        return tuple(
            SharedFile(**{k: v for k, v in item.items() if k in fields})
            for item in items
            if isinstance(item, dict)
        )
    except (ValueError, TypeError):
        logger.warning("a message's stored files are unreadable; taken for none")
        return ()


def with_text(files: tuple[SharedFile, ...], read: dict[str, SharedFile]) -> tuple[SharedFile, ...]:
    """The files with what was read of them (by id): a stub's details, a document's text."""
    return tuple(replace(read[file.id]) if file.id in read else file for file in files)
