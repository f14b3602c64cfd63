"""Who may see what: the one rule every tool that shows stored words goes through (built for
each reply by app.gate.scopes).

A reply is read by everyone in the conversation it is posted in, so it may show only what all
of them can read themselves:
- in a public channel: public channels' messages;
- in a private channel or a group DM: public channels, and that conversation;
- in a DM with one person: public channels, that DM, and the private channels and group DMs
  that person is a member of (asked of Slack, cached briefly).
Guests and people of other organisations read less (app.gate.standing): in a DM with a guest,
that DM and the channels the guest is in; in a DM with a person of another organisation, that
DM alone; in a channel or group DM any such person is in (a Slack Connect channel), that
conversation alone. Never another person's DM. A conversation tomo knows nothing of counts as
private. What the model asks for changes none of this: the scope comes from where the reply
goes. Nothing written before its channel's `/tomo forget` is shown either (app.gate.rules).

A prompt obeys the same rule (app.context.builder): what it recalls of other conversations —
the workspace's memories, other channels' memories, the workspace's notes — only where the
scope allows it. Statements built once take a scope as bind parameters (`Scope.bound`,
`shown_public`, `every_shown`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Boolean, ColumnElement, and_, bindparam, exists, false, or_, select

from app.db.models import Channel
from app.gate.rules import forgotten_condition

_CHANNELS = Channel.__table__.c  # type: ignore[attr-defined]
# The bind parameters a scope gives a statement built once (`Scope.bound`).
_PUBLIC, _PRIVATE, _BEYOND = "scope_public", "scope_private", "scope_beyond"


@dataclass(frozen=True)
class Scope:
    """What a reply posted in `conversation` may show: any public channel's messages, and the
    non-public conversations in `private`."""

    conversation: str
    private: frozenset[str]
    forgotten: Mapping[str, float] = field(default_factory=dict)  # channel -> forgotten at
    # Whether public channels are shown at all: not where a guest or a person of another
    # organisation reads the reply (`private` is then all it may show).
    public: bool = True

    def allows(self, channel: str, *, public: bool) -> bool:
        return (public and self.public) or channel in self.private

    def where(self, channel_column: Any, created_column: Any) -> ColumnElement[bool]:
        """The same rule as a SQL condition on a message's conversation id and time: in a
        public channel tomo knows (a Channel row neither private nor a DM), or in one of
        `private`; never written before its channel's forget."""
        public = select(_CHANNELS.id).where(
            _CHANNELS.is_private == false(), _CHANNELS.is_im == false()
        )
        allowed = [channel_column.in_(public)] if self.public else []
        if self.private:
            allowed.append(channel_column.in_(sorted(self.private)))
        readable = or_(*allowed) if allowed else false()
        kept = forgotten_condition(self.forgotten, channel_column, created_column)
        return readable if kept is None else and_(readable, kept)

    def bound(self) -> dict[str, Any]:
        """This scope as the values of `shown_public` and `every_shown`'s bind parameters."""
        return {
            _PUBLIC: self.public,
            _PRIVATE: sorted(self.private),
            _BEYOND: bool(self.private - {self.conversation}),
        }


def shown_public(channel: Any) -> ColumnElement[bool]:
    """SQL with a scope's bind parameters (`Scope.bound`): what comes from the public channel
    `channel` (a column) may be shown: where public channels are, or it is one of the scope's."""
    return or_(bindparam(_PUBLIC, type_=Boolean), channel.in_(bindparam(_PRIVATE, expanding=True)))


def every_shown(channel: Any, *among: ColumnElement[bool]) -> ColumnElement[bool]:
    """SQL with a scope's bind parameters: what is made of every public channel `channel` (a
    column of its own table or alias) names where `among` holds may be shown — where public
    channels are, or, where the scope reaches beyond its own conversation (a guest's DM), when
    each of them is one of the scope's; never where the conversation is all it shows."""
    hidden = select(channel).where(*among, channel.not_in(bindparam(_PRIVATE, expanding=True)))
    return or_(
        bindparam(_PUBLIC, type_=Boolean),
        and_(bindparam(_BEYOND, type_=Boolean), ~exists(hidden)),
    )
