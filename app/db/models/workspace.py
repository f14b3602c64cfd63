"""The workspace as Slack tells it and people set it: channels, people, changes in who is in
a conversation, what `/tomo` set for a channel, and what Slack took away (erasures)."""

from __future__ import annotations

from sqlalchemy import false
from sqlmodel import Field, SQLModel


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


class ConversationChange(SQLModel, table=True):
    """When Slack last told of a change in who is in a conversation, or in what it is: `key`
    is a person's id (they joined or left a conversation) or a conversation's. What a process
    learnt from Slack before then (app.gate.scopes) is asked again."""

    __tablename__ = "conversation_change"

    key: str = Field(primary_key=True, max_length=32)
    changed_at: float = 0.0


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
