"""A message's readable text: what a person in the channel sees of it (docs/how-tomo-
works.md#recording).

`text`, else its rich_text (and other text-bearing) blocks; then its attachments: an
integration's pretext, title and text (or fallback), or the message a forward, share or link
preview carries, with its author; then the names of its files. Slack writes `text` in mrkdwn
(`<@U123>`, `<#C123>`, `<https://…|label>`), and the blocks are rendered the same way, so a
prompt reads one notation. Every function here is total: odd shapes give less text, never an
error.
"""

from __future__ import annotations

from typing import Any

# Attachment flags of a message quoted inside another: a forward or "share message", or the
# preview Slack unfurls from a link to a message.
SHARE_FLAGS = ("is_share", "is_msg_unfurl", "is_reply_unfurl")
MAX_DEPTH = 6  # nested rich text lists
RICH_CONTAINERS = frozenset(
    {"rich_text_section", "rich_text_list", "rich_text_quote", "rich_text_preformatted"}
)


def readable_text(raw: dict[str, Any]) -> str:
    """The text a person sees of this message, or "" when it shows nothing readable."""
    text = raw.get("text")
    attachments = raw.get("attachments")
    files = raw.get("files")
    if not attachments and not files and type(text) is str and text:
        return text  # the usual message: nothing else to read
    parts = [_main_text(raw)]
    if isinstance(attachments, list):
        parts.extend(attachment_text(a) for a in attachments)
    if isinstance(files, list):
        parts.append(files_text(files))
    return "\n".join(p for p in parts if p)


def _main_text(raw: dict[str, Any], depth: int = 0) -> str:
    text = raw.get("text")
    if isinstance(text, str) and text.strip():
        return text
    return blocks_text(raw.get("blocks"), depth)


def blocks_text(blocks: Any, depth: int = 0) -> str:
    """Layout blocks as text: rich_text, section (text and fields), header, context, markdown."""
    if not isinstance(blocks, list):
        return ""
    lines = [_block(b, depth) for b in blocks if isinstance(b, dict)]
    return "\n".join(line for line in lines if line)


def _block(block: dict[str, Any], depth: int) -> str:
    kind = block.get("type")
    if kind == "rich_text":
        return "\n".join(_rich(e, depth) for e in _dicts(block.get("elements")))
    if kind == "section":
        fields = [_text_object(f) for f in _dicts(block.get("fields"))]
        return "\n".join(t for t in (_text_object(block.get("text")), *fields) if t)
    if kind == "header":
        return _text_object(block.get("text"))
    if kind == "context":
        return " ".join(t for t in map(_text_object, _dicts(block.get("elements"))) if t)
    if kind == "markdown":
        return _string(block.get("text"))
    return ""


def _text_object(value: Any) -> str:
    """A composition text object ({"type": "mrkdwn" | "plain_text", "text": ...})."""
    if isinstance(value, dict) and value.get("type") in ("mrkdwn", "plain_text"):
        return _string(value.get("text"))
    return ""


def _rich(element: dict[str, Any], depth: int) -> str:
    """A rich_text element: a section, list, quote or code block (quotes and code blocks
    hold inline elements directly; lists hold sections, and lists)."""
    kind = element.get("type")
    if kind not in RICH_CONTAINERS:
        return _inline(element)
    if depth >= MAX_DEPTH:
        return ""
    parts = [_rich(e, depth + 1) for e in _dicts(element.get("elements"))]
    if kind == "rich_text_list":
        ordered = element.get("style") == "ordered"
        return "\n".join(f"{f'{n}.' if ordered else '•'} {p}" for n, p in enumerate(parts, 1))
    if kind == "rich_text_quote":
        return "\n".join(f"> {line}" for line in "".join(parts).split("\n"))
    if kind == "rich_text_preformatted":
        return "```\n" + "".join(parts) + "\n```"
    return "".join(parts)


def _inline(element: dict[str, Any]) -> str:
    kind = element.get("type")
    if kind == "text":
        return _string(element.get("text"))
    if kind == "link":
        url, label = _string(element.get("url")), _string(element.get("text"))
        return f"<{url}|{label}>" if label else f"<{url}>"
    if kind == "user":
        return f"<@{_string(element.get('user_id'))}>"
    if kind == "channel":
        return f"<#{_string(element.get('channel_id'))}>"
    if kind == "usergroup":
        return f"<!subteam^{_string(element.get('usergroup_id'))}>"
    if kind == "broadcast":
        return f"<!{_string(element.get('range'))}>"
    if kind == "emoji":
        return f":{_string(element.get('name'))}:"
    if kind == "message_mention":
        return f"[a message in <#{_string(element.get('channel_id'))}>]"
    if kind == "date":
        return _string(element.get("fallback"))
    if kind == "color":
        return _string(element.get("value"))
    return ""


def attachment_text(attachment: Any, depth: int = 0) -> str:
    """One attachment as text: a quoted message with its author, or an integration's post."""
    if not isinstance(attachment, dict):
        return ""
    if any(attachment.get(flag) is True for flag in SHARE_FLAGS):
        return shared_message_text(attachment, depth)
    title = _string(attachment.get("title"))
    link = _string(attachment.get("title_link"))
    if title and link and link not in title:
        title = f"<{link}|{title}>"
    fields = [
        f"{_string(f.get('title'))}: {_string(f.get('value'))}".strip(": ")
        for f in _dicts(attachment.get("fields"))
    ]
    parts = [
        _string(attachment.get("pretext")),
        title,
        _string(attachment.get("text")) or blocks_text(attachment.get("blocks"), depth),
        *fields,
    ]
    parts = [p for p in parts if p]
    if not parts:
        parts = [_string(attachment.get("fallback"))]
    return "\n".join(p for p in parts if p)


def shared_message_text(attachment: dict[str, Any], depth: int = 0) -> str:
    """A forwarded, shared or unfurled message, quoted under its author."""
    text = _string(attachment.get("text"))
    if not text:
        text = "\n".join(
            blocks_text((block.get("message") or {}).get("blocks"), depth)
            for block in _dicts(attachment.get("message_blocks"))
            if isinstance(block.get("message"), dict)
        ).strip()
    files = attachment.get("files")
    extra = files_text(files) if isinstance(files, list) else ""
    if not text and not extra:
        text = _string(attachment.get("fallback"))
    author = _string(attachment.get("author_id"))
    name = _string(attachment.get("author_name")) or _string(attachment.get("author_subname"))
    who = " ".join(p for p in (f"<@{author}>" if author else "", f"({name})" if name else "") if p)
    head = f"[shared message from {who}]" if who else "[shared message]"
    quoted = "\n".join(f"> {line}" for line in f"{text}\n{extra}".strip().split("\n"))
    return f"{head}\n{quoted}"


def files_text(files: list[Any]) -> str:
    """`[file: name]` for each file, so a prompt knows they are there."""
    names = []
    for file in files:
        if isinstance(file, dict):
            names.append(_string(file.get("name")) or _string(file.get("title")) or "file")
    return " ".join(f"[file: {name}]" for name in names)


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
