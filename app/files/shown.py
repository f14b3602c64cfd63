"""A message's text as prompts and memories show it: each document's text, once read, under the
`[file: name]` mark that names it (app.slack.text). A Slack Connect stub, named by no one when
the message came, is marked `[file: file]`; once files.info named it, its mark takes the name.
And a prompt's context with what was read of its files (app.files.reader)."""

from __future__ import annotations

from dataclasses import replace

from app.domain import ChannelMessages, ChatMessage, Context, SharedFile
from app.slack.files import with_text

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


def shown_context(
    context: Context, read: dict[str, SharedFile], seen: dict[str, tuple[str, ...]]
) -> Context:
    """The context with what was read of its files (by id: a document's text, a stub's
    details) and the images seen (data: URIs, by the ts of their message)."""

    def updated(message: ChatMessage) -> ChatMessage:
        new = tuple(read[f.id] for f in message.files if f.id in read)  # read, or named
        images = seen.get(message.ts, ())
        if not new and not images:
            return message
        return replace(
            message,
            text=shown_text(message.text, new),
            files=with_text(message.files, read),
            images=images,
        )

    history = context.conversation_history
    messages = ChannelMessages(
        channel_id=history.channel_id,
        channel_name=history.channel_name,
        top_level_messages=tuple(map(updated, history.top_level_messages)),
        thread_messages={ts: tuple(map(updated, t)) for ts, t in history.thread_messages.items()},
    )
    return replace(context, conversation_history=messages)
