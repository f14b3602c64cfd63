"""The manifest subscribes to the events that say what Slack took away: Slack sends
`app_uninstalled` and `tokens_revoked` only to apps subscribed to them (its event reference),
and the channel ones need the channels:read / groups:read scopes the manifest has."""

from __future__ import annotations

from app.db.migrate import PROJECT_ROOT
from app.slack.events import REMOVALS


def test_the_manifest_subscribes_to_removals() -> None:
    manifest = (PROJECT_ROOT / "slack-manifest.yml").read_text()
    events = manifest.split("bot_events:\n", 1)[1].split("org_deploy_enabled", 1)[0]
    subscribed = {line.strip()[2:] for line in events.splitlines() if line.strip().startswith("- ")}
    assert len(REMOVALS) == 6 and REMOVALS | {"member_left_channel"} <= subscribed
    scopes = manifest.split("    bot:\n", 1)[1].split("settings:", 1)[0]
    assert "- channels:read" in scopes and "- groups:read" in scopes
