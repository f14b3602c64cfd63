"""A message written as it arrives (Slack's chat streaming: chat.startStream, chat.appendStream,
chat.stopStream), through slack-sdk's async chat-stream helper; our errors.

The helper starts the stream with the first text it is given and appends each later text
(its buffer is one character: tomo batches appends itself, app.conversation.reply.stream_writer).
A stream found again after an uncertain start, or after a restart, is continued with the
methods themselves: the helper only knows streams it started. A message that can no longer be
stopped is finished with chat.update.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError, error_from_exception
from app.slack.web.methods import Method

if TYPE_CHECKING:
    from slack_sdk.web.async_chat_stream import AsyncChatStream

logger = logging.getLogger(__name__)

# Refusals that say streaming is not for this workspace or token at all (not for this one
# conversation): tomo stops trying it until it restarts.
NOT_FOR_THIS_WORKSPACE = frozenset(
    {
        "unknown_method",
        "not_allowed",
        "not_allowed_token_type",
        "feature_not_enabled",
        "missing_scope",
        "access_denied",
        "accesslimited",
        "enterprise_is_restricted",
        "method_deprecated",
        "deprecated_endpoint",
    }
)
GOV_SLACK_HOST = "slack-gov.com"  # GovSlack's Web API (no chat streaming there)


class MessageStream:
    """One streamed message: `start` it, `append` to it, `stop` it."""

    def __init__(self, slack: SlackClient, *, channel: str, ts: str | None = None) -> None:
        self._slack = slack
        self.channel = channel
        self.ts = ts  # None until Slack answered the start
        self._helper: AsyncChatStream | None = None

    @property
    def _found_ts(self) -> str:
        # Without the helper, the stream was found again: made with its ts.
        return cast(str, self.ts)

    @classmethod
    async def start(
        cls,
        slack: SlackClient,
        *,
        channel: str,
        thread_ts: str,
        recipient_user_id: str | None,
        recipient_team_id: str | None,
        text: str,
        chunks: list[dict[str, Any]] | None = None,
    ) -> MessageStream:
        """Start the message with `text` (and `chunks`: task updates) in the thread (thread_ts
        "": at the top level, which Slack's reference allows though the helper's signature
        wants a thread)."""
        stream = cls(slack, channel=channel)
        stream._helper = await slack.chat_stream(
            channel=channel,
            thread_ts=thread_ts or None,
            recipient_user_id=recipient_user_id,
            recipient_team_id=recipient_team_id,
        )
        try:
            await stream._helper.append(markdown_text=text, chunks=chunks)
        except Exception as error:
            raise error_from_exception(Method.CHAT_START_STREAM, error) from error
        stream.ts = stream._helper.ts
        if not stream.ts:
            raise SlackError(Method.CHAT_START_STREAM, "answer without ts", uncertain=True)
        return stream

    async def append(self, text: str, *, chunks: list[dict[str, Any]] | None = None) -> None:
        """Add `text`, then `chunks` (Slack's task_update chunks: what tomo is doing)."""
        if self._helper is not None:
            try:
                await self._helper.append(markdown_text=text, chunks=chunks)
            except Exception as error:
                raise error_from_exception(Method.CHAT_APPEND_STREAM, error) from error
            return
        if chunks is not None:
            said = [{"type": "markdown_text", "text": text}] if text else []
            await self._slack.append_stream(
                channel=self.channel, ts=self._found_ts, chunks=said + chunks
            )
        else:
            await self._slack.append_stream(
                channel=self.channel, ts=self._found_ts, markdown_text=text
            )

    async def stop(
        self,
        text: str,
        *,
        metadata: dict[str, Any] | None,
        blocks: list[dict[str, Any]] | None = None,
    ) -> None:
        """Finish the message with its last `text` and `metadata` (how it is found again), and
        `blocks` rendered under it. After a failed stop the next goes by the method itself
        (the helper's state is its own, and may hold the failed stop's text)."""
        if self._helper is not None:
            helper, self._helper = self._helper, None
            try:
                await helper.stop(markdown_text=text or None, metadata=metadata, blocks=blocks)
            except Exception as error:
                raise error_from_exception(Method.CHAT_STOP_STREAM, error) from error
            return
        await self._slack.stop_stream(
            channel=self.channel,
            ts=self._found_ts,
            markdown_text=text,
            metadata=metadata,
            blocks=blocks,
        )


async def rewrite(
    slack: SlackClient,
    *,
    channel: str,
    ts: str,
    text: str,
    metadata: dict[str, Any] | None,
    blocks: list[dict[str, Any]] | None = None,
) -> None:
    """Give a message its whole text (chat.update with `markdown_text`, as a stream writes it):
    how a stream that can no longer be stopped or appended to is finished. With `blocks` (the
    text's own markdown block among them: Slack takes no `markdown_text` beside blocks) the
    message shows those, and `text` is its notification's."""
    metadata = metadata or None
    if blocks:
        await slack.update_message(
            channel=channel, ts=ts, text=text, blocks=blocks, metadata=metadata
        )
    else:
        await slack.update_message(channel=channel, ts=ts, markdown_text=text, metadata=metadata)


def refused_everywhere(error: SlackError) -> bool:
    """Whether a refused start means streaming is not allowed for this workspace or token."""
    return not error.uncertain and not error.rate_limited and error.error in NOT_FOR_THIS_WORKSPACE
