"""Reading an event_callback's envelope: who it was delivered for."""

from __future__ import annotations

from typing import Any

import pytest

from app.slack.events import bot_authorization


def test_the_bot_installation_names_tomos_user() -> None:
    envelope = {
        "authorizations": [
            {"user_id": "U_PERSON", "team_id": "T1", "is_bot": False},
            {"user_id": "UBOT", "team_id": "T1", "is_bot": True},
        ]
    }
    assert bot_authorization(envelope) == ("UBOT", "T1")


@pytest.mark.parametrize(
    "authorizations",
    [None, "UBOT", [], ["UBOT"], [{"user_id": "UBOT"}], [{"is_bot": True, "user_id": 7}]],
)
def test_anything_else_names_nobody(authorizations: Any) -> None:
    assert bot_authorization({"authorizations": authorizations}) is None
