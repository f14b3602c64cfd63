"""When a judgment or a reply has nothing to do, read off the context it was about to use.

One rule serves both jobs. A conversation's newest message is its newest turn: notes (a join,
a topic) and empty messages are not turns. The channel's top level has nothing left to judge
or answer once its newest message has moved into its own thread (someone replied there).
A message is answered once a reply's prompt held it (`answered_ts`, app.conversation.answered),
never because a reply's post came after it: a person's message sent while tomo wrote has an
earlier ts than tomo's post, and is answered next. (Where no reply of tomo's held anything in
the conversation, a post of tomo's after the message is no reply's, and still ends it.)
A judgment is skipped when tomo, another bot or no one spoke last, when a reply answered the
newest message, or when it is too old. A reply asked for (a mention, a DM, an auto-reply)
answers the person's message that set its timer or a newer one of theirs; a judgment's reply
answers exactly the message judged, and nothing once the conversation moved on.
"""

from __future__ import annotations

from app.domain import ChatMessage, Context, ReplyReason


def moved_into_thread(context: Context, message: ChatMessage) -> bool:
    """At a channel's top level: `message` has replies now, so its thread carries it on."""
    return not context.target_thread_ts and bool(
        context.conversation_history.get_thread(message.ts)
    )


def held(message: ChatMessage, answered_ts: str) -> bool:
    """Whether a reply's prompt held `message` (`answered_ts`: the newest message one held)."""
    return bool(answered_ts) and float(message.ts) <= float(answered_ts)


def newest_human(context: Context) -> ChatMessage | None:
    """The newest turn a person wrote (not tomo, not a bot, not Slackbot)."""
    for message in reversed(context.target_turns()):
        if not message.from_self and not message.from_bot:
            return message
    return None


def judged_turn(context: Context, *, answered_ts: str) -> ChatMessage | None:
    """The turn a judgment weighs: the newest; but where only tomo's posts follow someone's
    turn that no reply's prompt held (it came while tomo wrote), that turn."""
    turns = context.target_turns()
    if not answered_ts:
        return turns[-1] if turns else None
    for message in reversed(turns):
        if not message.from_self:
            return turns[-1] if held(message, answered_ts) else message
    return turns[-1] if turns else None


def judgment_skip(context: Context, *, max_age: float, answered_ts: str = "") -> str | None:
    """Why this conversation needs no judgment (and no model call), or None."""
    newest = judged_turn(context, answered_ts=answered_ts)
    if newest is None:
        return "no messages"
    if newest.from_self:
        return "tomo spoke last"
    if held(newest, answered_ts):
        return "a reply answered the newest message"
    if newest.from_bot:
        return "a bot spoke last"
    if context.now - newest.created_at > max_age:
        return "the newest message is too old"
    if moved_into_thread(context, newest):
        return "the newest top-level message has moved into its thread"
    return None


def reply_skip(
    context: Context, *, latest_ts: str, reason: ReplyReason, answered_ts: str = ""
) -> str | None:
    """Why there is nothing to answer, or None (`latest_ts`: the message that set the timer;
    `answered_ts`: the newest message a reply's prompt held)."""
    turns = context.target_turns()
    trigger = newest_human(context)
    if trigger is None or held(trigger, answered_ts):
        return "nothing left to answer"
    if not answered_ts and turns[-1].from_self:
        return "nothing left to answer"
    if latest_ts and reason.asked and float(trigger.ts) < float(latest_ts):
        return "the message to answer is gone, or not a person's"
    if latest_ts and not reason.asked and trigger.ts != latest_ts:
        return "the conversation moved on since the judgment"
    if not reason.asked and moved_into_thread(context, trigger):
        return "the message moved into its thread"
    return None
