"""Where a new message goes (docs/how-tomo-works.md#routing): nowhere, to a delayed judgment, or to
a reply now."""

from __future__ import annotations

from collections.abc import Container

from app.domain import ReplyReason, Route, RouteKind
from app.slack.events import IncomingMessage
from app.slack.kinds import NO_BOTS, is_person


def is_from_bot(
    message: IncomingMessage, *, bot_user_id: str | None, bot_users: Container[str] = NO_BOTS
) -> bool:
    """Not a person: tomo itself, another bot, Slackbot, or a user known to be a bot."""
    return (bot_user_id is not None and message.user_id == bot_user_id) or not is_person(
        user_id=message.user_id,
        bot_id=message.bot_id,
        subtype=message.subtype,
        bot_users=bot_users,
    )


def mentions_bot(message: IncomingMessage, *, bot_user_id: str | None) -> bool:
    return message.app_mention or (bot_user_id is not None and f"<@{bot_user_id}>" in message.text)


def route_message(
    message: IncomingMessage,
    *,
    bot_user_id: str | None,
    auto_reply_channels: frozenset[str],
    bot_users: Container[str] = NO_BOTS,
) -> Route:
    """Only a person's conversational message with something to read sets a timer."""
    if (
        not message.conversational
        or not message.readable
        or is_from_bot(message, bot_user_id=bot_user_id, bot_users=bot_users)
    ):
        return Route(RouteKind.RECORD, message.thread_ts)
    if message.channel_type == "im":
        # Direct messages are answered where they were written.
        return Route(RouteKind.REPLY, message.thread_ts, ReplyReason.DM)
    own_thread = message.thread_ts or message.ts
    if mentions_bot(message, bot_user_id=bot_user_id):
        return Route(RouteKind.REPLY, own_thread, ReplyReason.MENTION)
    if message.channel in auto_reply_channels:
        return Route(RouteKind.REPLY, own_thread, ReplyReason.AUTO_REPLY)
    return Route(RouteKind.JUDGMENT, message.thread_ts)
