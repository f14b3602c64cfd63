"""tomo's vocabulary, shared by every layer: where a new message goes (`Route`), why a reply is
made (`ReplyReason`), the language of a text (`language_of`), and the objects prompts are made
of (messages, channel messages, memories, `Context`). Nothing here does I/O or imports the
rest of tomo."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum


class RouteKind(StrEnum):
    """What a new message sets in motion (docs/how-tomo-works.md, "Routing")."""

    RECORD = "record"  # nothing: stored only
    JUDGMENT = "judgment"  # a judgment after the quiet wait
    FOLLOW_UP = "follow_up"  # a judgment soon: a conversation tomo takes part in
    REPLY = "reply"  # a reply now


class ReplyReason(StrEnum):
    """Why tomo replies: someone asked it (a mention, a DM, an AUTO_REPLY_CHANNELS message), a
    person went on talking with it (a follow-up a judgment found was for tomo), or a judgment
    decided it should join."""

    MENTION = "mention"
    DM = "dm"
    AUTO_REPLY = "auto_reply"
    FOLLOW_UP = "follow_up"
    JUDGMENT = "judgment"

    @property
    def asked(self) -> bool:
        """Someone asked for this reply: it answers their message, not a judged one."""
        return self is not ReplyReason.JUDGMENT

    @property
    def limited(self) -> bool:
        """The own-voice limits apply: all of them to a judgment's reply, the channel's mode
        alone to an auto-reply. Mentions, DMs and follow-ups are never limited (a follow-up's
        judgment checks the channel's mode itself: app.conversation.voice.own_voice)."""
        return self in (ReplyReason.JUDGMENT, ReplyReason.AUTO_REPLY)

    @property
    def shows_on_it(self) -> bool:
        """The person sees that tomo is on it while the reply is written."""
        return self in (ReplyReason.MENTION, ReplyReason.DM, ReplyReason.FOLLOW_UP)


@dataclass(frozen=True)
class Route:
    kind: RouteKind
    conversation_ts: str  # the thread whose jobs this message drives; "" = top level
    reason: ReplyReason | None = None  # for replies
    # For a judgment: people's messages in the channel within PACE_WINDOW_SECONDS before this
    # one, when the channel is lively enough to shorten the wait (app.conversation.timing.pace);
    # else 0.
    pace: int = 0


@dataclass(frozen=True)
class SharedFile:
    """A file a message carries, as Slack describes it (app.slack.files), and once read, the
    start of its text (a document's)."""

    id: str
    name: str
    mimetype: str = ""
    filetype: str = ""
    size: int | None = None  # bytes, as Slack says
    url: str = ""  # url_private_download, else url_private
    mode: str = ""  # hosted, snippet, external, file_access (a Slack Connect stub), ...
    stub: bool = False  # file_access check_file_info: files.info says the rest
    text: str | None = None  # a document's text, read once (capped)

    @property
    def is_image(self) -> bool:
        return self.mimetype in IMAGE_TYPES

    @property
    def is_pdf(self) -> bool:
        return self.mimetype == "application/pdf" or self.filetype == "pdf"

    @property
    def is_text(self) -> bool:
        return self.mode == "snippet" or self.mimetype.startswith("text/")

    @property
    def is_html(self) -> bool:
        return self.mimetype == "text/html" or self.filetype == "html"

    @property
    def is_document(self) -> bool:
        """A PDF, a text file or a snippet: its text is read, for any model."""
        return not self.is_image and (self.is_pdf or self.is_text)

    @property
    def readable(self) -> bool:
        """A kind of file tomo reads: an image, a PDF, a text file or a snippet."""
        return self.is_image or self.is_pdf or self.is_text


# Hiragana, katakana (with the long-vowel mark), CJK ideographs, half-width katakana.
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff66-\uff9f]")


def is_japanese(text: str) -> bool:
    """The text has Japanese in it (a kana or an ideograph)."""
    return _JAPANESE.search(text) is not None


def language_of(text: str) -> str:
    """The language tomo's own words take for a text: `ja` when it has Japanese in it, else
    `en` (templates/ hold both)."""
    return "ja" if is_japanese(text) else "en"


IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

JUDGED_MESSAGES = 10  # the newest messages a judgment weighs (Context.judged_messages)
# A thread's lead-in (Context.lead_in): the top-level messages just before its parent.
LEAD_IN_SECONDS = 600.0
LEAD_IN_MESSAGES = 3


@dataclass(frozen=True)
class ChatMessage:
    ts: str
    thread_ts: str  # "" at the top level
    user_id: str | None
    author: str  # display name, or the user id when none is known
    text: str
    created_at: float
    from_self: bool  # posted by tomo itself
    from_bot: bool = False  # not a person: a bot, Slackbot, a user whose users.info is_bot
    edited: bool = False
    note: bool = False  # a system message (a join, a topic, a pin): a labelled note at most
    files: tuple[SharedFile, ...] = ()
    # Its images as data: URIs, when the prompt's model sees images (app.files.reader).
    images: tuple[str, ...] = ()

    def said(self) -> str:
        """`<@U1> (Alice): text`, as a prompt's turn shows someone else's message."""
        who = f"<@{self.user_id}>" if self.user_id else "(bot)"
        name = f" ({self.author})" if self.author and self.author != self.user_id else ""
        return f"{who}{name}: {self.text}"

    @property
    def is_turn(self) -> bool:
        """Someone said something readable: it may be a turn, the newest message, answered."""
        return not self.note and bool(self.text.strip())


@dataclass(frozen=True)
class ChannelMemory:
    channel_id: str
    channel_name: str
    long_term_memory: str | None = None
    short_term_memory: str | None = None


@dataclass(frozen=True)
class NoteLine:
    """A note tomo wrote (app.memory.notebook), as a prompt shows it: its id, so that
    `forget_note` can name it."""

    id: int
    text: str
    importance: int
    about: tuple[str, ...]
    created_at: float


@dataclass(frozen=True)
class ChannelMessages:
    """A channel's recent messages: the top level (thread parents included) and each thread."""

    channel_id: str
    channel_name: str
    top_level_messages: tuple[ChatMessage, ...] = ()
    # thread_ts -> the thread's messages, parent first when it is known, oldest first.
    thread_messages: dict[str, tuple[ChatMessage, ...]] = field(default_factory=dict)

    def get_thread(self, thread_ts: str) -> tuple[ChatMessage, ...]:
        return self.thread_messages.get(thread_ts, ())

    def get_all_messages(self) -> list[ChatMessage]:
        seen: dict[str, ChatMessage] = {m.ts: m for m in self.top_level_messages}
        for messages in self.thread_messages.values():
            seen.update((m.ts, m) for m in messages)
        return sorted(seen.values(), key=lambda m: float(m.ts))

    @property
    def total_message_count(self) -> int:
        return len(self.get_all_messages())


@dataclass(frozen=True)
class Context:
    """Everything a judgment, a reply or a memory needs about one conversation; immutable."""

    persona_name: str
    persona_prompt: str
    conversation_history: ChannelMessages
    now: float
    target_thread_ts: str | None = None  # None: the channel's top level
    workspace_long_term_memory: str | None = None
    workspace_short_term_memory: str | None = None
    channel_memories: dict[str, ChannelMemory] = field(default_factory=dict)
    thread_memories: dict[str, str] = field(default_factory=dict)
    # The notes this conversation may see that its prompts show (app.context.notes).
    notes: tuple[NoteLine, ...] = ()
    # What people asked tomo to keep to in this channel (app.context.instructions); None: none.
    channel_instructions: str | None = None
    # Who and what the prompt would show without a name: people (and bots) never looked up,
    # and the channel itself when it is not in the directory yet.
    unnamed_people: frozenset[str] = frozenset()
    channel_known: bool = True

    @property
    def channel_name(self) -> str:
        return self.conversation_history.channel_name

    def target_messages(self) -> tuple[ChatMessage, ...]:
        """The conversation being judged or answered, oldest first."""
        if self.target_thread_ts:
            return self.conversation_history.get_thread(self.target_thread_ts)
        return self.conversation_history.top_level_messages

    def target_turns(self) -> tuple[ChatMessage, ...]:
        """The conversation's turns: its messages without the notes and the empty ones."""
        return tuple(m for m in self.target_messages() if m.is_turn)

    def judged_messages(self) -> tuple[ChatMessage, ...]:
        """The newest messages of the conversation, which a judgment weighs (the prompt shows
        the earlier ones as the channel's recent conversation)."""
        return self.target_messages()[-JUDGED_MESSAGES:]

    def lead_in(self) -> tuple[ChatMessage, ...]:
        """What a thread's first message may point at ("@tomo what is this?" under a
        screenshot posted just before): the channel's top-level messages written within
        LEAD_IN_SECONDS before the thread's parent, at most LEAD_IN_MESSAGES, oldest first;
        none for a channel's top level or a DM."""
        thread = self.target_messages()
        if not self.target_thread_ts or not thread or thread[0].ts != self.target_thread_ts:
            return ()
        parent = thread[0]
        before = [
            m
            for m in self.conversation_history.top_level_messages
            if m.is_turn
            and not m.from_self
            and 0 < parent.created_at - m.created_at <= LEAD_IN_SECONDS
            and float(m.ts) < float(parent.ts)
        ]
        return tuple(before[-LEAD_IN_MESSAGES:])
