"""A message's text as prompts and memories show it: each document's text, once read, under the
`[file: name]` mark that names it (app.slack.text). A Slack Connect stub, named by no one when
the message came, is marked `[file: file]`; once files.info named it, its mark takes the name."""

from __future__ import annotations

from app.domain import SharedFile

UNNAMED = "[file: file]"  # app.slack.text's mark for a file without a name (a stub)


def shown_text(text: str, files: tuple[SharedFile, ...]) -> str:
    cursor = 0  # past the last block put in: two files of one name get a mark each
    for file in files:
        mark = f"[file: {file.name}]"
        if not file.text:
            at = text.find(UNNAMED, cursor)
            if mark != UNNAMED and mark not in text and at >= 0:  # a stub files.info named
                text = text[:at] + mark + text[at + len(UNNAMED) :]
                cursor = at + len(mark)
            continue
        block = f"{mark}\n```\n{file.text}\n```"
        at, length = text.find(mark, cursor), len(mark)
        if at < 0:
            at, length = text.find(UNNAMED, cursor), len(UNNAMED)
        if at < 0:
            text = f"{text}\n{block}".strip()
            cursor = len(text)
        else:
            text = text[:at] + block + text[at + length :]
            cursor = at + len(block)
    return text
