"""A message's text as prompts and memories show it: each document's text, once read, under the
`[file: name]` mark that names it (app.slack.text)."""

from __future__ import annotations

from app.domain import SharedFile


def shown_text(text: str, files: tuple[SharedFile, ...]) -> str:
    cursor = 0  # past the last block put in: two files of one name get a mark each
    for file in files:
        if not file.text:
            continue
        mark = f"[file: {file.name}]"
        block = f"{mark}\n```\n{file.text}\n```"
        at = text.find(mark, cursor)
        if at < 0:
            text = f"{text}\n{block}".strip()
            cursor = len(text)
        else:
            text = text[:at] + block + text[at + len(mark) :]
            cursor = at + len(block)
    return text
