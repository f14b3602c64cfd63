"""The label values this instance's metrics show at 0 from the first scrape
(app.observability.metrics.Known),
gathered from the parts that own them, as the web process starts (before its job worker
exists, so the zeros are in its own files)."""

from __future__ import annotations

from app.conversation.claims.status import ReplyStatus
from app.domain import ReplyReason
from app.observability.metrics import Known
from app.settings import Settings
from app.tools.registry import chosen

# The events slack-manifest.yml subscribes tomo to (its message.* events are all `message`),
# and the URL check Slack sends when the events URL is set.
EVENT_TYPES = (
    "app_mention",
    "message",
    "member_joined_channel",
    "app_home_opened",
    "assistant_thread_started",
    "assistant_thread_context_changed",
    "channel_deleted",
    "group_deleted",
    "channel_left",
    "group_left",
    "member_left_channel",
    "channel_shared",
    "channel_unshared",
    "app_uninstalled",
    "tokens_revoked",
    "url_verification",
)
# The Slack Web API methods tomo calls (app.slack.web.client, app.slack.web.streams).
SLACK_METHODS = (
    "auth.test",
    "bots.info",
    "users.info",
    "users.conversations",
    "conversations.info",
    "conversations.history",
    "conversations.replies",
    "conversations.members",
    "files.info",
    "chat.postMessage",
    "chat.update",
    "chat.startStream",
    "chat.appendStream",
    "chat.stopStream",
    "reactions.add",
    "reactions.remove",
    "assistant.threads.setStatus",
    "assistant.threads.setTitle",
    "assistant.threads.setSuggestedPrompts",
)
# How a reply's claim is settled (app.conversation.claims.ending.settle).
REPLY_OUTCOMES = (
    ReplyStatus.POSTED,
    ReplyStatus.FAILED,
    ReplyStatus.INTERRUPTED,
    ReplyStatus.UNCERTAIN,
)


def known_labels(settings: Settings) -> Known:
    return Known(
        event_types=EVENT_TYPES,
        reply_reasons=tuple(ReplyReason),
        reply_outcomes=REPLY_OUTCOMES,
        tools=chosen(settings),
        purposes=tuple(settings.purpose_models),
        slack_methods=SLACK_METHODS,
    )
