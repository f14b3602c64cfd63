"""The tables. Times are UNIX epoch seconds (float) so SQLite and PostgreSQL agree.

A conversation is (channel, thread_ts) where thread_ts is "" for the top level of a channel:
the identity key of the judgment and reply job ids.
"""

from __future__ import annotations

from sqlalchemy import Index, UniqueConstraint, false, text
from sqlmodel import Field, SQLModel

TOP_LEVEL = ""


class Channel(SQLModel, table=True):
    id: str = Field(primary_key=True, max_length=32)
    team_id: str = Field(default="", max_length=32)
    name: str = Field(default="", max_length=255)
    is_private: bool = False
    is_im: bool = False
    # A Slack Connect channel: people of another organisation read it (app.gate.scopes).
    is_ext_shared: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    is_member: bool = True
    # When Slack last told its state: the sync's time, or the event's that changed it.
    updated_at: float = 0.0


class Person(SQLModel, table=True):
    id: str = Field(primary_key=True, max_length=32)
    team_id: str = Field(default="", max_length=32)
    name: str = Field(default="", max_length=255)
    display_name: str = Field(default="", max_length=255)
    real_name: str = Field(default="", max_length=255)
    is_bot: bool = False
    # A guest (users.info is_restricted or is_ultra_restricted); None: not known yet.
    is_guest: bool | None = None
    # The Enterprise organisation the person belongs to ("" for none).
    enterprise_id: str = Field(default="", max_length=32, sa_column_kwargs={"server_default": ""})
    fetched_at: float = 0.0


# The rows ix_message_people holds; a query uses the index only when its WHERE has these terms.
PEOPLES_MESSAGES = (
    "kind = 'conversational' AND NOT deleted AND user_id IS NOT NULL AND bot_id IS NULL"
)


class Message(SQLModel, table=True):
    """One Slack message, thread replies included, keyed by (channel, ts)."""

    # Every stored message updates each index, on the ack path: only those queries use.
    __table_args__ = (
        Index("ix_message_thread", "channel", "thread_ts", "ts"),  # threads, context
        Index("ix_message_created", "created_at"),  # recovery, memory windows
        # People's conversational messages by channel and time: the lively-channel pace
        # (app.conversation.timing.pace) counts them from this index alone, without reading rows.
        Index(
            "ix_message_people",
            "channel",
            "ts",
            sqlite_where=text(PEOPLES_MESSAGES),
            postgresql_where=text(PEOPLES_MESSAGES),
        ),
    )

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)
    team_id: str = Field(default="", max_length=32)
    # "" for a top-level message (a thread parent included), the parent's ts for a reply.
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    # The conversation whose jobs this message drives ("" = the channel's top level);
    # a top-level mention starts its own thread, so its conversation_ts is its own ts.
    conversation_ts: str = Field(default=TOP_LEVEL, max_length=32)
    # What routing decided: "record" (bot or system message), "judgment" or "reply".
    route: str = Field(default="record", max_length=16)
    # For a message routed to a reply: why (mention, dm, auto_reply); kept for recovery.
    reply_reason: str | None = Field(default=None, max_length=16)
    user_id: str | None = Field(default=None, max_length=32)
    bot_id: str | None = Field(default=None, max_length=32)
    text: str = ""
    subtype: str | None = Field(default=None, max_length=64)
    # What kind of message it is (app.slack.kinds): "conversational" or "system".
    kind: str = Field(default="conversational", max_length=16)
    channel_type: str | None = Field(default=None, max_length=16)
    created_at: float = 0.0
    edited_at: float | None = None  # a person's last edit (or the deletion); not an unfurl
    deleted: bool = False
    # The files it carries (app.slack.files: JSON), with the text read from documents.
    files: str | None = None


class ConversationChange(SQLModel, table=True):
    """When Slack last told of a change in who is in a conversation, or in what it is: `key`
    is a person's id (they joined or left a conversation) or a conversation's. What a process
    learnt from Slack before then (app.gate.scopes) is asked again."""

    __tablename__ = "conversation_change"

    key: str = Field(primary_key=True, max_length=32)
    changed_at: float = 0.0


class SeenEvent(SQLModel, table=True):
    """Event ids already acknowledged, so a redelivery is not processed twice."""

    __tablename__ = "seen_event"
    __table_args__ = (Index("ix_seen_event_received", "received_at"),)

    event_id: str = Field(primary_key=True, max_length=64)
    received_at: float = 0.0


class Judgment(SQLModel, table=True):
    """Every decision of the judgment job, with the reason the model gave."""

    __table_args__ = (
        UniqueConstraint("channel", "thread_ts", "latest_ts", name="uq_judgment_latest"),
        Index("ix_judgment_decided", "decided_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    latest_ts: str = Field(max_length=32)
    decided_at: float = 0.0
    valid: bool = True
    # It judged a follow-up: a person's message in a conversation tomo takes part in.
    follow_up: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    should_respond: bool = False
    reason: str = ""
    confidence: float | None = None
    delay_seconds: float | None = None
    reply_at: float | None = None
    model: str = Field(default="", max_length=255)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # The emoji tomo reacted with instead of replying (a closing follow-up's "thanks!"),
    # written once Slack took it.
    reaction: str | None = Field(default=None, max_length=100)


class Reply(SQLModel, table=True):
    """A claim on answering one latest message; the unique key makes a second post impossible."""

    __table_args__ = (
        UniqueConstraint("channel", "thread_ts", "trigger_ts", name="uq_reply_trigger"),
        Index("ix_reply_created", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    trigger_ts: str = Field(max_length=32)
    reason: str = Field(default="", max_length=16)  # mention, dm, auto_reply, judgment
    # claimed, posted, failed; interrupted (its process stopped), uncertain (a post's outcome
    # is unknown: looked up in Slack before anything is posted again): app.conversation.claims.
    status: str = Field(default="claimed", max_length=16)
    posted_ts: str | None = Field(default=None, max_length=32)
    error: str | None = None
    created_at: float = 0.0
    posted_at: float | None = None
    # What to post, stored before the first message is sent (JSON: {"messages": [text, ...],
    # "model_failure": why the model gave no answer when they are the apology, or null): a
    # claim taken over finishes posting these, never a new answer.
    chunks: str | None = None


class OnIt(SQLModel, table=True):
    """A sign in Slack that tomo is working on a person's message (a thread status or a
    reaction), kept until it is cleared so that one left by a stopped process is cleared at
    the next start."""

    __tablename__ = "on_it"

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)  # the person's message
    thread_ts: str = Field(default="", max_length=32)  # the thread of the status
    kind: str = Field(max_length=16)  # status, reaction
    set_at: float = 0.0


class Memory(SQLModel, table=True):
    """An LLM-written memory of the workspace, a channel or a thread."""

    __table_args__ = (UniqueConstraint("scope", "scope_id", "kind", name="uq_memory_scope"),)

    id: int | None = Field(default=None, primary_key=True)
    scope: str = Field(max_length=16)  # workspace, channel, thread
    scope_id: str = Field(default="", max_length=80)  # "", channel id, "channel:thread_ts"
    kind: str = Field(max_length=16)  # long_term, short_term, summary
    content: str = ""
    source_ts: str = Field(default="", max_length=64)  # newest source the memory has seen
    updated_at: float = 0.0
    model: str = Field(default="", max_length=255)


class ChannelControl(SQLModel, table=True):
    """What people set for a channel with `/tomo` (docs/how-tomo-works.md#tomo): its mode, when
    its memories were last forgotten, and its standing instructions. A channel without a row is
    in the normal mode, with no instructions."""

    __tablename__ = "channel_control"

    channel: str = Field(primary_key=True, max_length=32)
    mode: str = Field(default="normal", max_length=16)  # normal, quiet, mentions_only
    quiet_until: float | None = None  # quiet ends then; None: until changed
    changed_by: str = Field(default="", max_length=32)  # the user who set the mode
    changed_at: float = 0.0
    # /tomo forget: nothing written in the channel before this feeds its memories again.
    forgotten_at: float | None = None
    forgotten_by: str = Field(default="", max_length=32)
    # /tomo instructions: how tomo is to behave here (app.context.instructions); None: none.
    instructions: str | None = Field(default=None, max_length=1000)
    instructions_by: str = Field(default="", max_length=32, sa_column_kwargs={"server_default": ""})
    instructions_at: float | None = None


class LLMCall(SQLModel, table=True):
    """Every call to a model, so spend and latency are known."""

    __tablename__ = "llm_call"
    __table_args__ = (
        Index("ix_llm_call_started", "started_at"),
        Index("ix_llm_call_reply", "reply_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    purpose: str = Field(max_length=32)  # judgment, reply, memory
    model: str = Field(default="", max_length=255)
    started_at: float = 0.0
    latency_ms: float = 0.0
    prompt_tokens: int | None = None
    # Of the prompt tokens, those the provider read from its cache (billed at a fraction).
    cached_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    success: bool = True
    error: str | None = None
    # The reply claim (Reply.id) a call was made for: a reply's rounds of tool calls and its
    # answer. Not a foreign key: calls and claims expire on their own (retention).
    reply_id: int | None = None


class Removal(SQLModel, table=True):
    """A message Slack deleted, whose row is gone: only where and when, never what it said,
    so the memories built from it are written again without it (app.memory.sources)."""

    __table_args__ = (Index("ix_removal_created", "created_at"),)

    channel: str = Field(primary_key=True, max_length=32)
    ts: str = Field(primary_key=True, max_length=32)
    thread_ts: str = Field(default=TOP_LEVEL, max_length=32)
    created_at: float = 0.0  # the deleted message's Slack time (the retention goes by it)
    removed_at: float = 0.0


class Erasure(SQLModel, table=True):
    """What Slack took away from tomo (docs/data-and-privacy.md): a channel deleted or left,
    the app uninstalled. While a row is here nothing of its channel (scope "channel") or of
    the workspace (scope "team") is stored; a deletion under way (done_at unset) is carried
    on by app.db.erasure, after a restart too."""

    scope: str = Field(primary_key=True, max_length=16)  # channel, team
    target: str = Field(primary_key=True, max_length=32)  # the channel id, or the team id
    reason: str = Field(max_length=24)  # deleted, left, app_uninstalled, tokens_revoked
    requested_at: float = 0.0
    done_at: float | None = None  # everything deleted (never set for "left")


class Feedback(SQLModel, table=True):
    """A person's 👍 or 👎 on one of tomo's replies (Slack's feedback buttons): one per person
    and message, a second click replacing the first."""

    __table_args__ = (
        UniqueConstraint("channel", "reply_ts", "user_id", name="uq_feedback_click"),
        Index("ix_feedback_at", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    reply_ts: str = Field(max_length=32)  # the message the buttons were on
    user_id: str = Field(max_length=32)
    value: str = Field(max_length=16)  # positive, negative
    # The reply claim the buttons were posted with (their block_id names it); None when the
    # click named none this version knows.
    claim_id: int | None = None
    at: float = 0.0


class Note(SQLModel, table=True):
    """Something tomo wrote down with its `note` tool (app.tools.note). It belongs where it was
    written: a public channel's note is the workspace's ("workspace"), any other conversation's
    is that conversation's alone ("conversation")."""

    __table_args__ = (
        # A reply run again after a restart has the same claim: its notes are written once.
        UniqueConstraint("claim_id", "text_hash", name="uq_note_claim_text"),
        Index("ix_note_conversation", "conversation", "created_at"),
        Index("ix_note_scope", "scope", "importance", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    team_id: str = Field(default="", max_length=32)
    conversation: str = Field(max_length=32)  # the channel (or DM) it was written in
    scope: str = Field(max_length=16)  # workspace, conversation
    text: str = Field(max_length=1000)
    text_hash: str = Field(max_length=64)  # sha256 of the text, for the uniqueness rule
    importance: int = 3  # 1-5
    about: str = Field(default="", max_length=400)  # user ids, comma-separated
    created_at: float = 0.0
    claim_id: int  # the reply claim that wrote it (app.db.models.Reply.id)


# The tables of tools from MCP servers, registered with these (alembic/env.py imports this
# module for SQLModel.metadata).
from app.db.models.mcp import McpApproval, McpServerState, McpSwitch  # noqa: E402, F401


class DigestSchedule(SQLModel, table=True):
    """A channel's digest schedule (`/tomo digest daily HH:MM` or `weekly DAY HH:MM`, read in
    TIMEZONE: app.digest.schedule): the wall-clock time, the next time it is due, and where the
    previous digest ended. The database is the truth: the `digest:{channel}` timer is set from
    it, at start-up too."""

    __tablename__ = "digest_schedule"

    channel: str = Field(primary_key=True, max_length=32)
    cadence: str = Field(max_length=16)  # daily, weekly
    weekday: int | None = None  # weekly: 0 Monday .. 6 Sunday
    hour: int = 0
    minute: int = 0
    next_due_at: float = 0.0  # epoch seconds: the digest's next due time
    last_until: float | None = None  # the end of the previous digest's period (scheduled or now)
    set_by: str = Field(default="", max_length=32)
    set_at: float = 0.0


class DigestRun(SQLModel, table=True):
    """A claim on posting one digest: a channel's due time (or a `now`'s moment) is posted once,
    whatever restarts, instances or kills; the text is stored before the first post, so a run
    taken over looks its posts up in Slack before posting again (app.digest.runs)."""

    __tablename__ = "digest_run"
    __table_args__ = (
        UniqueConstraint("channel", "due_at", name="uq_digest_run_due"),
        Index("ix_digest_run_created", "created_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    channel: str = Field(max_length=32)
    due_at: float  # the due time it is for (a `now`: the moment it was asked)
    status: str = Field(default="claimed", max_length=16)  # claimed, posted, empty, failed, ...
    since: float = 0.0  # the period's messages: since <= Slack time < until
    until: float = 0.0
    messages: int = 0  # people's messages in the period
    chunks: str | None = None  # JSON list of the messages to post, stored before posting
    posted_ts: str | None = Field(default=None, max_length=32)
    error: str | None = None
    created_at: float = 0.0
    finished_at: float | None = None
