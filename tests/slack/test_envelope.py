"""Whether an event was delivered for tomo's installation (docs/how-tomo-works.md#ingress)."""

from __future__ import annotations

from typing import Any

from app.slack.envelope import Installation, foreign_reason, install_proof, read_envelope


def foreign(payload: dict[str, Any], me: Installation) -> str | None:
    return foreign_reason(read_envelope(payload), me)


def proof(payload: dict[str, Any], *, bot_user_id: str | None) -> tuple[float, str] | None:
    return install_proof(read_envelope(payload), bot_user_id=bot_user_id)


ME = Installation(bot_user_id="UBOT", team_id="T0001", enterprise_id=None, app_id="A1")


def envelope(**fields: Any) -> dict[str, Any]:
    mine = {"team_id": "T0001", "user_id": "UBOT", "is_bot": True, "enterprise_id": None}
    return {"team_id": "T0001", "api_app_id": "A1", "authorizations": [mine]} | fields


def test_tomos_own_events() -> None:
    assert foreign(envelope(), ME) is None


def test_another_app() -> None:
    assert foreign(envelope(api_app_id="A9"), ME) == "another app (A9)"
    # Until tomo knows its app id, the app cannot be told apart by it.
    assert foreign(envelope(api_app_id="A9"), Installation("UBOT", "T0001")) is None


def test_another_installation_by_its_authorizations() -> None:
    theirs = [{"team_id": "T9", "user_id": "U9BOT", "is_bot": True}]
    assert foreign(envelope(team_id="T9", authorizations=theirs), ME) == (
        "another installation (T9)"
    )


def test_a_channel_shared_with_another_organisation_is_ours() -> None:
    """In a Slack Connect channel the envelope's team_id is the other organisation's; the
    authorizations name tomo's installation."""
    assert foreign(envelope(team_id="T0EXT", is_ext_shared_channel=True), ME) is None


def test_an_org_wide_installation_is_told_by_its_enterprise() -> None:
    me = Installation(bot_user_id="W0BOT", team_id="T0001", enterprise_id="E1", app_id="A1")
    org = [
        {
            "team_id": None,
            "user_id": "W0OTHER",
            "enterprise_id": "E1",
            "is_enterprise_install": True,
        }
    ]
    assert foreign(envelope(team_id="T0002", authorizations=org), me) is None


def test_without_authorizations_the_envelopes_team_decides() -> None:
    assert foreign(envelope(team_id="T9", authorizations=None), ME) == "another workspace (T9)"
    assert foreign(envelope(authorizations=None), ME) is None
    grid = Installation("UBOT", "T0001", enterprise_id="E1", app_id="A1")
    sibling = envelope(team_id="T0002", enterprise_id="E1", authorizations=None)
    assert foreign(sibling, grid) is None


def test_nothing_is_foreign_before_tomo_knows_who_it_is() -> None:
    unknown = Installation(bot_user_id=None, team_id=None)
    theirs = [{"team_id": "T9", "user_id": "U9BOT"}]
    assert foreign(envelope(team_id="T9", authorizations=theirs), unknown) is None


def test_an_event_to_tomos_bot_user_proves_the_install_at_its_event_time() -> None:
    """Slack delivers events only to an installed app (api.slack.com/apis/events-api:
    `authorizations`, `event_time`): when and for which workspace, or None."""
    mine = {"team_id": "T1", "user_id": "UBOT", "is_bot": True}
    envelope: dict[str, Any] = {"event_time": 1700000300, "authorizations": [mine]}
    assert proof(envelope, bot_user_id="UBOT") == (1700000300.0, "T1")
    assert proof(envelope, bot_user_id="UOTHER") is None
    assert proof(envelope, bot_user_id=None) is None
    person = {**mine, "is_bot": False}
    assert proof({**envelope, "authorizations": [person]}, bot_user_id="UBOT") is None
    for time in (None, "1700000300", True, float("nan"), float("inf"), -1):
        assert proof({**envelope, "event_time": time}, bot_user_id="UBOT") is None
