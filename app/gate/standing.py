"""Who a person is to the workspace, for who may see what (docs/tools.md): one of its members,
a guest (users.info `is_restricted`, `is_ultra_restricted`), or a person of another
organisation (Slack Connect: a `team_id` not the workspace's; a person of another workspace
of the same Enterprise organisation is none). Guests and people of other organisations read
less (app.gate.scopes)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Standing(StrEnum):
    MEMBER = "member"
    GUEST = "guest"
    OUTSIDER = "outsider"  # of another organisation
    UNKNOWN = "unknown"  # not asked of Slack yet (counts as an outsider until it is)

    @property
    def reads_less(self) -> bool:
        return self is not Standing.MEMBER


def standing_of(person: Any | None, *, team_id: str | None, enterprise_id: str | None) -> Standing:
    """A Person row's standing (None, or one whose guest fact is unknown: UNKNOWN); `team_id`
    and `enterprise_id`: tomo's own workspace's (auth.test)."""
    if person is None or person.is_guest is None:
        return Standing.UNKNOWN
    if team_id and person.team_id and person.team_id != team_id:
        same_org = bool(enterprise_id) and person.enterprise_id == enterprise_id
        if not same_org:
            return Standing.OUTSIDER
    return Standing.GUEST if person.is_guest else Standing.MEMBER
