"""The Slack Web API methods tomo calls, and how each kind of call may be retried."""

from __future__ import annotations

from enum import StrEnum


class Method(StrEnum):
    """A Web API method by its name on the wire (docs.slack.dev/reference/methods)."""

    AUTH_TEST = "auth.test"
    BOTS_INFO = "bots.info"
    FILES_INFO = "files.info"
    USERS_INFO = "users.info"
    USERS_CONVERSATIONS = "users.conversations"
    CONVERSATIONS_INFO = "conversations.info"
    CONVERSATIONS_HISTORY = "conversations.history"
    CONVERSATIONS_REPLIES = "conversations.replies"
    CONVERSATIONS_MEMBERS = "conversations.members"
    CHAT_POST_MESSAGE = "chat.postMessage"
    CHAT_UPDATE = "chat.update"
    CHAT_START_STREAM = "chat.startStream"
    CHAT_APPEND_STREAM = "chat.appendStream"
    CHAT_STOP_STREAM = "chat.stopStream"
    REACTIONS_ADD = "reactions.add"
    REACTIONS_REMOVE = "reactions.remove"
    ASSISTANT_SET_STATUS = "assistant.threads.setStatus"
    ASSISTANT_SET_SUGGESTED_PROMPTS = "assistant.threads.setSuggestedPrompts"
    ASSISTANT_SET_TITLE = "assistant.threads.setTitle"

    @property
    def sdk_name(self) -> str:
        """slack-sdk's name for it (chat_postMessage), which picks each method's encoding."""
        return self.value.replace(".", "_")


class Retry(StrEnum):
    """How a call may be retried. A read is retried after a 5xx or a dropped connection; a post
    never is, since Slack may have posted it (app.slack.web.errors): only a connection that was
    never made, or a 429 (Slack did nothing), is tried again. A read that must not wait
    (READ_NOW) answers a 429 at once, for calls that have something else to fall back on. A
    sign ("on it") is tried once: it must be quick, and it has a fallback of its own."""

    READ = "read"
    READ_NOW = "read-now"
    POST = "post"
    SIGN = "sign"
