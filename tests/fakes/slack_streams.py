"""Messages FakeSlack writes as they arrive: chat.startStream, chat.appendStream, chat.stopStream,
and chat.update (how a stream that can no longer be stopped is finished).

Sources: Slack's reference pages (docs.slack.dev/reference/methods/chat.startStream,
chat.appendStream, chat.stopStream, chat.update) and their machine-readable copies in
slack-ruby/slack-api-ref (methods/chat/*.json: arguments, example answers, error codes);
slack-sdk's own tests (tests/slack_sdk_async/web/test_async_chat_stream.py and the fixture
web_response_chat_stream_test.json) for what its chat-stream helper sends: JSON bodies whose
text travels as `chunks: [{"type": "markdown_text", "text": ...}]` (or `markdown_text`).

- startStream: `channel`; `thread_ts` optional (the reference: omitted, the message is at the top
  level); outside a DM `recipient_user_id` and `recipient_team_id` are required
  (`missing_recipient_user_id`, `missing_recipient_team_id`). Answers `{"ok", "channel", "ts"}`.
- appendStream: `channel`, `ts`, the text to add (`no_text` without any); a message that is not
  there `message_not_found`, one no longer streaming `message_not_in_streaming_state`.
  Answers `{"ok", "channel", "ts"}`.
- stopStream: the same errors; optional last text, `metadata` (event_type, event_payload) and
  `blocks` rendered under the text (checked as app.slack's blocks are: tests/fakes/slack_blocks).
  Answers `{"ok", "channel", "ts", "message": {...}}` with the finished message.
- chat.update: `channel`, `ts`, `text` or `markdown_text`, optional `metadata` and `blocks`
  (checked as stopStream's; they replace what the message showed); a message that is not there
  `message_not_found`, another author's `cant_update_message`.
Task chunks (what an AI app is doing; Slack's chat.appendStream reference, argument `chunks`;
slack-sdk's models/messages/chunk.py TaskUpdateChunk and @slack/types' TaskUpdateChunk):
`{"type": "task_update", "id", "title", "status": "pending" | "in_progress" | "complete" |
"error", "details"?, "output"?, "sources"?: [{"type": "url", "url", "text"}]}`, in a start,
an append or a stop; a call with only task chunks needs no text. Each stream keeps the task
chunks it received (`tasks`); `refuse_tasks()` makes every call carrying one answer
`invalid_chunks`, as a workspace that takes no such chunks would.

Slack ends a stream's streaming state by itself after a while without appends (vercel/chat
issue 607: `message_not_in_streaming_state` after minutes of silence); `expire_streams()` does
that at once.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.fakes.slack_blocks import checked_blocks
from tests.fakes.slack_marks import SlackMarks
from tests.fakes.slack_workspace import Message, Params, SlackError

STREAM_METHODS = frozenset(
    {"chat.startStream", "chat.appendStream", "chat.stopStream", "chat.update"}
)
STREAMING, STOPPED, EXPIRED = "in_progress", "completed", "expired"


TASK_STATUSES = frozenset({"pending", "in_progress", "complete", "error"})


def _chunks(params: Params) -> list[dict[str, Any]]:
    chunks = params.get("chunks")
    if isinstance(chunks, str):  # form-encoded: a JSON string
        try:
            chunks = json.loads(chunks)
        except ValueError:
            raise SlackError("invalid_chunks") from None
    for chunk in chunks or []:
        if not isinstance(chunk, dict) or "type" not in chunk:
            raise SlackError("invalid_chunks")
    return list(chunks or [])


def streamed_text(params: Params) -> str:
    """The text a stream call carries: `markdown_text`, then its markdown_text chunks."""
    text = str(params.get("markdown_text") or "")
    for chunk in _chunks(params):
        if chunk["type"] == "markdown_text":
            text += str(chunk.get("text") or "")
    return text


def task_chunks(params: Params) -> list[dict[str, Any]]:
    """The task_update chunks a stream call carries, each checked against Slack's shape."""
    tasks = [c for c in _chunks(params) if c["type"] == "task_update"]
    for task in tasks:
        if not isinstance(task.get("id"), str) or not isinstance(task.get("title"), str):
            raise SlackError("invalid_chunks")
        if task.get("status") not in TASK_STATUSES:
            raise SlackError("invalid_chunks")
        for source in task.get("sources") or []:
            if not isinstance(source, dict) or source.get("type") != "url":
                raise SlackError("invalid_chunks")
            if not isinstance(source.get("url"), str) or not isinstance(source.get("text"), str):
                raise SlackError("invalid_chunks")
    return tasks


class SlackStreams(SlackMarks):
    def _clear_streams(self) -> None:
        with self._lock:
            self._streams: dict[tuple[str, str], dict[str, Any]] = {}
            self._tasks_refused = False

    def refuse_tasks(self) -> None:
        """From now on, every stream call carrying a task chunk answers `invalid_chunks`."""
        with self._lock:
            self._tasks_refused = True

    def _tasks_of(self, params: Params) -> list[dict[str, Any]]:
        tasks = task_chunks(params)
        if tasks and self._tasks_refused:
            raise SlackError("invalid_chunks")
        return tasks

    def streams(self) -> list[dict[str, Any]]:
        """Each streamed message, in the order started: channel, thread_ts, ts, text, state
        (in_progress, completed, expired), the recipient ids, appends (how many calls added
        text), updated (whether chat.update rewrote it) and tasks (its task chunks, in order)."""
        with self._lock:
            return [copy.deepcopy(s) for s in self._streams.values()]

    def expire_streams(self) -> None:
        """Every stream still streaming leaves that state, as Slack does after a silence."""
        with self._lock:
            for stream in self._streams.values():
                if stream["state"] == STREAMING:
                    stream["state"] = EXPIRED

    def bot_messages(self, channel: str) -> list[Message]:
        """The messages tomo has in `channel` (posted, streamed), oldest first."""
        return [m for m in self.history(channel) if m.get("user") == self.bot_user_id]

    def answer_stream(self, method: str, params: Params) -> dict[str, Any]:
        handler = {
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "chat.update": self._chat_update,
        }[method]
        with self._lock:
            try:
                return copy.deepcopy(handler(params))
            except SlackError as exc:
                return {"ok": False, "error": str(exc)}

    # The methods below run with the lock held.
    def _start_stream(self, params: Params) -> dict[str, Any]:
        channel = str(params.get("channel") or "")
        if not channel:
            raise SlackError("channel_not_found")
        direct = channel.startswith("D")
        if not direct and not params.get("recipient_user_id"):
            raise SlackError("missing_recipient_user_id")
        if not direct and not params.get("recipient_team_id"):
            raise SlackError("missing_recipient_team_id")
        text = streamed_text(params)
        tasks = self._tasks_of(params)
        thread_ts = str(params["thread_ts"]) if params.get("thread_ts") else None
        ts = self._next_ts()
        message: Message = {"type": "message", "ts": ts, "text": text}
        message |= {"user": self.bot_user_id, "bot_id": self.bot_id}
        message |= {"thread_ts": thread_ts} if thread_ts else {}
        self._history.setdefault(channel, []).append(message)
        self._statuses.pop((channel, thread_ts or ""), None)  # as a post clears it
        self._streams[(channel, ts)] = {
            "channel": channel,
            "thread_ts": thread_ts,
            "ts": ts,
            "text": text,
            "state": STREAMING,
            "recipient_user_id": params.get("recipient_user_id"),
            "recipient_team_id": params.get("recipient_team_id"),
            "appends": 1 if text else 0,
            "updated": False,
            "tasks": tasks,
        }
        return {"ok": True, "channel": channel, "ts": ts}

    def _streaming(self, params: Params) -> tuple[dict[str, Any], Message]:
        channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
        stream = self._streams.get((channel, ts))
        message = self._find(channel, ts)
        if stream is None or message is None:
            raise SlackError("message_not_found")
        if stream["state"] != STREAMING:
            raise SlackError("message_not_in_streaming_state")
        return stream, message

    def _append_stream(self, params: Params) -> dict[str, Any]:
        stream, message = self._streaming(params)
        text = streamed_text(params)
        tasks = self._tasks_of(params)
        if not text and not tasks:
            raise SlackError("no_text")
        stream["tasks"] += tasks
        if text:
            stream["text"] += text
            stream["appends"] += 1
            message["text"] = stream["text"]
        return {"ok": True, "channel": stream["channel"], "ts": stream["ts"]}

    def _stop_stream(self, params: Params) -> dict[str, Any]:
        stream, message = self._streaming(params)
        blocks = checked_blocks(params.get("blocks"), refused=self._blocks_refused)
        text = streamed_text(params)
        stream["tasks"] += self._tasks_of(params)
        if text:
            stream["text"] += text
            stream["appends"] += 1
            message["text"] = stream["text"]
        stream["state"] = STOPPED
        if blocks:  # rendered under the streamed text
            stream["blocks"] = blocks
            message["blocks"] = blocks
        metadata = _metadata(params)
        message |= {"metadata": metadata} if metadata else {}
        finished = {k: v for k, v in message.items() if k != "metadata"}
        answer = {"ok": True, "channel": stream["channel"], "ts": stream["ts"]}
        return answer | {"message": finished | {"subtype": "bot_message"}}

    def _chat_update(self, params: Params) -> dict[str, Any]:
        channel, ts = str(params.get("channel") or ""), str(params.get("ts") or "")
        message = self._find(channel, ts)
        if message is None:
            raise SlackError("message_not_found")
        if message.get("user") != self.bot_user_id:
            raise SlackError("cant_update_message")
        blocks = checked_blocks(params.get("blocks"), refused=self._blocks_refused)
        text = str(params.get("markdown_text") or params.get("text") or "")
        if not text and not blocks:
            raise SlackError("no_text")
        message["text"] = text
        metadata = _metadata(params)
        message |= {"metadata": metadata} if metadata else {}
        stream = self._streams.get((channel, ts))
        if stream is not None:
            stream |= {"text": text, "updated": True}
        if blocks:
            message["blocks"] = blocks
            if stream is not None:
                stream["blocks"] = blocks
        shown = {k: v for k, v in message.items() if k != "metadata"}
        return {"ok": True, "channel": channel, "ts": ts, "text": text, "message": shown}


def _metadata(params: Params) -> dict[str, Any] | None:
    metadata = params.get("metadata")
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except ValueError:
            raise SlackError("invalid_metadata_format") from None
    return metadata if isinstance(metadata, dict) and metadata else None
