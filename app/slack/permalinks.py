"""A message's permalink, built the way Slack's chat.getPermalink answers it, and read back.

`{workspace url}archives/{channel}/p{ts without the dot}`, and for a reply in a thread
`?thread_ts={thread_ts}&cid={channel}` after it (Slack's Web API reference, chat.getPermalink's
example answers). The workspace url is what auth.test answers as `url`. Built locally, so a
tool that shows a hundred messages makes no call to Slack for their links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from app.slack.guards import slack_id
from app.slack.timestamps import slack_ts

# "/archives/C123/p1358546515000008": the ts's digits with its six decimals, no dot.
_PATH = re.compile(r"/archives/([A-Za-z0-9_-]{1,32})/p([0-9]{7,16})/?").fullmatch


@dataclass(frozen=True)
class Linked:
    """Where a permalink points: a message of `channel`, in the thread `thread_ts` ("" at a
    channel's top level or for a thread's parent)."""

    channel: str
    ts: str
    thread_ts: str = ""


def permalink(workspace_url: str, *, channel: str, ts: str, thread_ts: str = "") -> str:
    """The link to a message; `thread_ts` is its thread's parent for a reply ("" otherwise)."""
    base = workspace_url if workspace_url.endswith("/") else workspace_url + "/"
    link = f"{base}archives/{channel}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        link += f"?thread_ts={thread_ts}&cid={channel}"
    return link


def parse_permalink(value: object) -> Linked | None:
    """The message a permalink points to, or None for anything that is not one (any string,
    any object: never an exception). Slack's angle-bracket form `<url|label>` is read too."""
    if not isinstance(value, str):
        return None
    text = value.strip().removeprefix("<").removesuffix(">").split("|", 1)[0].strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    found = _PATH(parts.path)
    if found is None:
        return None
    channel, digits = found.group(1), found.group(2)
    ts = slack_ts(f"{digits[:-6]}.{digits[-6:]}")
    if not slack_id(channel) or ts is None:
        return None
    thread = parse_qs(parts.query).get("thread_ts", [""])[0]
    thread_ts = slack_ts(thread) or ""
    return Linked(channel=channel, ts=ts, thread_ts="" if thread_ts == ts else thread_ts)
