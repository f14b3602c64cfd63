"""Who tomo is in Slack at start-up, and tomo's workspace again after an uninstall: when an
event proved a reinstall while Slack still refuses the token, Slack is asked until it takes
the token, and then every conversation owed a judgment or a reply gets its timer back
(docs/data-and-privacy.md#installing-it-again)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from app.retention.guard import installed_again, workspace_gone

if TYPE_CHECKING:
    from app.wiring.runtime import Runtime

logger = logging.getLogger(__name__)

SLACK_RESUME = "slack-resume"


async def after_identity(runtime: Runtime) -> None:
    """Start-up: auth.test (once only while the workspace is gone), then the token's check
    and the channel list."""
    await runtime.directory.load_bots()
    gone = await workspace_gone(runtime.engine)
    if gone is not None and not await installed_again(runtime.engine, runtime.slack, gone):
        runtime.identity.gone(gone)  # until an event shows the app installed again
        return
    await runtime.identity.learn(runtime.slack)
    runtime.spawn(
        runtime.identity.watch(runtime.slack, stop=lambda: workspace_gone(runtime.engine)),
        "slack-check",
    )
    await runtime.directory.sync_channels()


def resume_slack(runtime: Runtime) -> None:
    """A message was stored after a reinstall while this process holds the token refused:
    auth.test again (a refused token every few minutes) until Slack takes it; then what is
    owed gets its timers (`slack_works_again`)."""
    if any(t.get_name() in (SLACK_RESUME, "identity") for t in runtime.background):
        return
    runtime.spawn(_resume(runtime), SLACK_RESUME)


async def _resume(runtime: Runtime) -> None:
    async def stop() -> str | None:
        return await workspace_gone(runtime.engine)

    await runtime.identity.learn(runtime.slack, stop=stop)
    if not any(t.get_name() == "slack-check" for t in runtime.background):
        runtime.spawn(runtime.identity.watch(runtime.slack, stop=stop), "slack-check")


def slack_works_again(runtime: Runtime) -> None:
    """Slack takes the token after refusing it: what waited is owed now."""
    logger.info("Slack takes the bot token again: the conversations owed get their timers")
    runtime.spawn(_owed_again(runtime), "owed-again")


async def _owed_again(runtime: Runtime) -> None:
    try:
        await runtime.restore_timers()
        await runtime.directory.sync_channels()
    except Exception:  # the next start restores them as well
        logger.exception("restoring the timers of what is owed failed")
