"""What tomo shows in Slack's place for AI apps: the suggested prompts of a person's DM with it
and a DM thread's title (docs.slack.dev/reference/methods/assistant.threads.
setSuggestedPrompts, assistant.threads.setTitle; both need `assistant:write`). Each is tried
once: it has nothing to fall back on, and nothing waits for it."""

from __future__ import annotations

from typing import Any

from app.slack.web.client import SlackClient


async def set_suggested_prompts(
    slack: SlackClient,
    *,
    channel: str,
    prompts: list[dict[str, str]],
    title: str | None = None,
    thread_ts: str | None = None,
) -> None:
    """The prompts offered at the top of a person's DM with tomo; without `thread_ts`, the
    messages tab's own (Slack's agent view), with it the thread's (its older assistant view)."""
    params: dict[str, Any] = {"channel_id": channel, "prompts": prompts}
    params |= {"title": title} if title else {}
    params |= {"thread_ts": thread_ts} if thread_ts else {}
    await slack.mark("assistant.threads.setSuggestedPrompts", **params)


async def set_thread_title(slack: SlackClient, *, channel: str, thread_ts: str, title: str) -> None:
    """The title a DM thread with tomo is listed under in the person's history with it."""
    await slack.mark(
        "assistant.threads.setTitle", channel_id=channel, thread_ts=thread_ts, title=title
    )
