"""Our thin wrapper over slack-sdk's AsyncWebClient: one typed method per Slack Web API method
tomo calls (app.slack.web.methods names them), our errors (app.slack.web.errors). The reads are
in app.slack.web.reads; here are the writes: posts and writes never retried once Slack may have
received them (Retry.POST), signs and marks for people to see tried once (Retry.SIGN)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from app.slack.web.errors import SlackError, unreadable
from app.slack.web.methods import Method, Retry
from app.slack.web.reads import BotIdentity, Reads

if TYPE_CHECKING:
    from slack_sdk.web.async_chat_stream import AsyncChatStream

__all__ = ["BotIdentity", "SlackClient", "SlackError"]


class SlackClient(Reads):
    """Slack's Web API as tomo calls it; `close` when done (app.slack.web.calls)."""

    # Posts and writes: never retried once Slack may have received them.

    async def post_message(
        self,
        *,
        channel: str,
        text: str,
        thread_ts: str | None,
        metadata: dict[str, Any] | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> str:
        """Post once: never retried after Slack may have received it. A SlackError with
        `uncertain` set means the post may be in Slack all the same (look before posting again:
        `posts_with_metadata`). With `blocks`, Slack shows them instead of `text`."""
        params: dict[str, Any] = {
            "channel": channel,
            "text": text,
            "unfurl_links": False,
            "unfurl_media": False,
        }
        if thread_ts:
            params["thread_ts"] = thread_ts
        if metadata:
            params["metadata"] = metadata
        if blocks:
            params["blocks"] = blocks
        data = await self._call(Method.CHAT_POST_MESSAGE, policy=Retry.POST, **params)
        ts = data.get("ts")
        if not isinstance(ts, str) or not ts:
            raise unreadable(Method.CHAT_POST_MESSAGE, data)
        return ts

    async def update_message(
        self,
        *,
        channel: str,
        ts: str,
        text: str | None = None,
        markdown_text: str | None = None,
        blocks: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """chat.update: the message's new `text` (or `markdown_text`), `blocks`, `metadata`;
        what is None is left out of the call."""
        params: dict[str, Any] = {"text": text} if text is not None else {}
        params |= {"markdown_text": markdown_text} if markdown_text is not None else {}
        params |= {"blocks": blocks} if blocks is not None else {}
        params |= {"metadata": metadata} if metadata is not None else {}
        await self._call(Method.CHAT_UPDATE, policy=Retry.POST, channel=channel, ts=ts, **params)

    async def chat_stream(
        self,
        *,
        channel: str,
        thread_ts: str | None,
        recipient_user_id: str | None,
        recipient_team_id: str | None,
    ) -> AsyncChatStream:
        """slack-sdk's chat-stream helper (chat.startStream with its first append, then
        chat.appendStream, chat.stopStream), its buffer one character, its calls as posts."""
        web = await self._web(Retry.POST)
        return await web.chat_stream(
            channel=channel,
            thread_ts=cast(str, thread_ts),  # None is left out of the call
            recipient_user_id=recipient_user_id,
            recipient_team_id=recipient_team_id,
            buffer_size=1,
        )

    async def append_stream(
        self,
        *,
        channel: str,
        ts: str,
        markdown_text: str | None = None,
        chunks: list[dict[str, Any]] | None = None,
    ) -> None:
        """chat.appendStream to a stream the helper did not start (found again)."""
        params: dict[str, Any] = {}
        params |= {"markdown_text": markdown_text} if markdown_text is not None else {}
        params |= {"chunks": chunks} if chunks is not None else {}
        await self._call(
            Method.CHAT_APPEND_STREAM, policy=Retry.POST, channel=channel, ts=ts, **params
        )

    async def stop_stream(
        self,
        *,
        channel: str,
        ts: str,
        markdown_text: str | None = None,
        metadata: dict[str, Any] | None = None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> None:
        """chat.stopStream of a stream the helper did not start; what is empty is left out."""
        params: dict[str, Any] = {"markdown_text": markdown_text} if markdown_text else {}
        params |= {"metadata": metadata} if metadata else {}
        params |= {"blocks": blocks} if blocks else {}
        await self._call(
            Method.CHAT_STOP_STREAM, policy=Retry.POST, channel=channel, ts=ts, **params
        )

    # Signs and marks for people to see: tried once.

    async def add_reaction(self, *, channel: str, ts: str, name: str) -> None:
        """React to a message (already reacted counts as done)."""
        try:
            await self._call(
                Method.REACTIONS_ADD, policy=Retry.SIGN, channel=channel, timestamp=ts, name=name
            )
        except SlackError as error:
            if error.error != "already_reacted":
                raise

    async def remove_reaction(self, *, channel: str, ts: str, name: str) -> None:
        """Take a reaction back (none there counts as done)."""
        try:
            await self._call(
                Method.REACTIONS_REMOVE, policy=Retry.SIGN, channel=channel, timestamp=ts, name=name
            )
        except SlackError as error:
            if error.error not in ("no_reaction", "message_not_found"):
                raise

    async def set_thread_status(self, *, channel: str, thread_ts: str, status: str) -> None:
        """The "is thinking..." line under a thread (assistant.threads.setStatus; "" clears
        it, and so does the app's next post there)."""
        await self._call(
            Method.ASSISTANT_SET_STATUS,
            policy=Retry.SIGN,
            channel_id=channel,
            thread_ts=thread_ts,
            status=status,
        )

    async def set_suggested_prompts(
        self,
        *,
        channel: str,
        prompts: list[dict[str, str]],
        title: str | None = None,
        thread_ts: str | None = None,
    ) -> None:
        """The prompts offered at the top of a person's DM with tomo; without `thread_ts`, the
        messages tab's own (Slack's agent view), with it the thread's (its older assistant
        view). Needs `assistant:write`, as does the title."""
        params: dict[str, Any] = {"title": title} if title else {}
        params |= {"thread_ts": thread_ts} if thread_ts else {}
        await self._call(
            Method.ASSISTANT_SET_SUGGESTED_PROMPTS,
            policy=Retry.SIGN,
            channel_id=channel,
            prompts=prompts,
            **params,
        )

    async def set_thread_title(self, *, channel: str, thread_ts: str, title: str) -> None:
        """The title a DM thread with tomo is listed under in the person's history with it."""
        await self._call(
            Method.ASSISTANT_SET_TITLE,
            policy=Retry.SIGN,
            channel_id=channel,
            thread_ts=thread_ts,
            title=title,
        )
