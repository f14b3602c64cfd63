"""A call of an `approve` tool, asked for (docs/tools.md#approvals): it is not made; tomo posts
an approval card in the reply's thread, and the result tells the model so and ends the reply
with a line that says it waits for the person's decision (app.conversation.reply.tool_loop).

Only a reply to a person's message can ask (that person alone decides). A reply asks for one
call at most, and a conversation has one waiting at a time; a reply run again after a restart
asks for the same call once (the same approval, its card posted once). What happens after the
decision is app.conversation.approval.job's; the timer that ends the wait is the web process's
(app.conversation.approval.timers).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlmodel import col

from app.db.mcp import approvals
from app.db.models import Message, Reply
from app.db.models.mcp import McpApproval
from app.domain import language_of
from app.llm.prompts import render
from app.slack.interactive.approval_blocks import MAX_ARGUMENTS_CHARS, say, shown_arguments
from app.slack.web.client import SlackClient
from app.slack.web.errors import SlackError
from app.tools.base import Asker, ToolResult, failed
from app.tools.mcp.card import minutes, post_card
from app.tools.mcp.offer import OfferedTool

logger = logging.getLogger(__name__)

APPROVAL_SECONDS = 600.0  # without a decision in this long, the call is declined


class ApprovalRequests:
    def __init__(self, *, engine: AsyncEngine, slack: SlackClient) -> None:
        self._engine = engine
        self._slack = slack

    async def request(
        self, tool: OfferedTool, arguments: dict[str, Any], *, asker: Asker
    ) -> ToolResult:
        if asker.user_id is None:
            return failed(
                f"{tool.name} needs the approval of the person you answer, and no one asked "
                "for this reply; do not call it"
            )
        written = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        if len(shown_arguments(written)) > MAX_ARGUMENTS_CHARS:
            return failed(f"the arguments are too long to show {asker.user_id} in full")
        approval = await self._approval(tool, written, asker)
        if isinstance(approval, ToolResult):
            return approval
        assert approval.id is not None
        if approval.card_ts is None:
            try:
                card_ts = await post_card(self._slack, approval)
            except SlackError as error:
                logger.error("approval %d: the card was not posted: %s", approval.id, error)
                return failed("the approval card could not be posted; the call was not made")
            await approvals.set_card(self._engine, approval.id, card_ts)
            logger.info(
                "approval %d: %s asked of %s (claim %d)",
                approval.id,
                tool.name,
                approval.user_id,
                asker.claim_id,
            )
        return ToolResult(
            text=render(
                "tools/mcp_waiting.j2",
                tool=tool.name,
                user=approval.user_id,
                minutes=minutes(approval),
            ),
            last_line=say(approval.language, "reply_waits", user=approval.user_id),
        )

    async def _approval(
        self, tool: OfferedTool, written: str, asker: Asker
    ) -> McpApproval | ToolResult:
        """This reply's approval of the call: the one asked before (a reply run again), or a
        new one; a result that says no when another waits."""
        for earlier in await approvals.of_claim(self._engine, asker.claim_id):
            if (earlier.server, earlier.tool, earlier.arguments) == (
                tool.server,
                tool.tool,
                written,
            ):
                return earlier
            return failed(
                "this reply already asked for one call to be approved; one at a time. End your "
                "reply saying you wait for that decision"
            )
        if await approvals.pending_in(
            self._engine, channel=asker.channel, thread_ts=asker.thread_ts
        ):
            return failed(
                "another call waits for approval in this conversation; one at a time. Say so and "
                "ask again once it is decided"
            )
        reply = await self._reply(asker.claim_id)
        if reply is None:
            return failed("this reply cannot ask for approval; the call was not made")
        now = time.time()
        return await approvals.create(
            self._engine,
            channel=asker.channel,
            thread_ts=reply.thread_ts,
            reply_thread_ts=asker.thread_ts,
            trigger_ts=reply.trigger_ts,
            reason=reply.reason,
            claim_id=asker.claim_id,
            user_id=asker.user_id,
            language=await self._language(asker.channel, reply.trigger_ts),
            server=tool.server,
            tool=tool.tool,
            arguments=written,
            call_id=f"call_approval_{asker.claim_id}",
            created_at=now,
            expires_at=now + APPROVAL_SECONDS,
        )

    async def _reply(self, claim_id: int) -> Reply | None:
        async with self._engine.connect() as connection:
            row = (await connection.execute(select(Reply).where(col(Reply.id) == claim_id))).first()
        return Reply.model_validate(row._mapping) if row is not None else None

    async def _language(self, channel: str, ts: str) -> str:
        async with self._engine.connect() as connection:
            text = (
                await connection.execute(
                    select(col(Message.text)).where(
                        col(Message.channel) == channel, col(Message.ts) == ts
                    )
                )
            ).scalar_one_or_none()
        return language_of(text or "")
