"""A click on an approval card (docs/tools.md#approvals), in the web process that acknowledges
it: only the person whose message the reply answered may decide (anyone else is told so, in an
answer only they see); the first decision in time wins, in one conditional UPDATE, whatever
clicks twice or on which instance; then the approval's job runs at once, wherever jobs run,
and the card shows the decision."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncEngine

from app.conversation.approval.timers import ApprovalTimers
from app.db.mcp import approvals
from app.db.mcp.approvals import State
from app.slack.interactive.approval_blocks import say
from app.slack.interactive.interactions import ApprovalClick
from app.slack.interactive.response_url import respond
from app.slack.web.client import SlackClient
from app.tools.mcp.card import update_card

logger = logging.getLogger(__name__)


class ApprovalDecisions:
    def __init__(
        self, *, engine: AsyncEngine, slack: SlackClient, timers: ApprovalTimers, api_url: str
    ) -> None:
        self._engine = engine
        self._slack = slack
        self._timers = timers
        self._api_url = api_url

    async def decide(self, click: ApprovalClick) -> str | None:
        """Record the click; what to tell the clicker alone (None: nothing), and the card's
        rewrite, are left to `after`."""
        approval = await approvals.get(self._engine, click.approval_id)
        if approval is None or (approval.channel, approval.card_ts) != (
            click.channel,
            click.card_ts,
        ):
            logger.warning("a click on approval %d, which is not that card's", click.approval_id)
            return None
        if click.user_id != approval.user_id:
            logger.info("approval %d: %s may not decide", click.approval_id, click.user_id)
            return say(approval.language, "only", user=approval.user_id)
        won = await approvals.decide(
            self._engine, click.approval_id, approved=click.approved, user_id=click.user_id
        )
        if not won:
            return say(approval.language, "already")
        logger.info(
            "approval %d %s by %s",
            click.approval_id,
            "approved" if click.approved else "denied",
            click.user_id,
        )
        decided = await approvals.get(self._engine, click.approval_id) or approval
        await self._timers.decided(decided)
        return None

    async def after(self, click: ApprovalClick, told: str | None) -> None:
        """After the acknowledgement: the clicker's own answer, or the card's rewrite."""
        if told is not None:
            if click.response_url:
                await respond(click.response_url, told, api_url=self._api_url)
            return
        approval = await approvals.get(self._engine, click.approval_id)
        # An approved card is rewritten by the job that makes the call (app.conversation.
        # approval.job), in order: "making the call", then what came of it.
        if approval is not None and approval.decision == State.DENIED and not click.approved:
            await update_card(self._slack, approval, "denied")
