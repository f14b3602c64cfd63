"""What happens to a call that waited for approval (docs/tools.md#approvals): the approval job,
which its timer runs (app.conversation.approval.timers) when the person decides and when the
wait ends, and again after a restart until it is done.

- Still waiting, before its time: nothing (its timer is for the end of the wait).
- Past its time: declined (`expired`), the card says so.
- Approved: the call is made exactly once. Taking the right to make it is one conditional
  UPDATE (approved -> calling): of two clicks, two instances or two runs of this job, one
  takes it. A call whose process died while making it is `cut_short` (its job was taken for
  dead by the fleet, or the single instance started anew: app.conversation.approval.timers),
  or found `calling` for longer than STALE_CALL_SECONDS: it is never made again; the model
  is told it may or may not have been, and the card says so.
- Then the conversation goes on: a reply, claimed like any other (keyed by the card's ts, so
  it is posted once), whose prompt is the conversation, the call and what came of it.

Returns when to look again (epoch seconds), or None when there is nothing more to do.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import replace

from sqlalchemy.ext.asyncio import AsyncEngine

from app.conversation.claims import ending, taking
from app.conversation.claims.status import ReplyStatus
from app.conversation.claims.taking import Claim
from app.conversation.job import ConversationJob, JobParts
from app.conversation.reply.posting import Poster
from app.conversation.reply.prompt import Turns, reply_messages
from app.conversation.reply.service import usable
from app.conversation.reply.tool_loop import ToolLoop
from app.conversation.reply.words import apology
from app.db.mcp import approvals
from app.db.mcp.approvals import DECLINED, State
from app.db.models.mcp import McpApproval
from app.domain import ReplyReason
from app.jobs.kinds import JobKind
from app.llm import LLMError
from app.llm.prompts import render
from app.llm.tool_calls import ToolCall, assistant_turn, tool_turn
from app.recording.recorder import Recorder
from app.slack.mrkdwn import format_reply
from app.slack.web.client import SlackClient
from app.tools.base import Asker
from app.tools.given import GivenUrls
from app.tools.mcp.answers import McpRefused, McpUnreachable
from app.tools.mcp.card import minutes, update_card
from app.tools.mcp.servers import McpServers
from app.tools.mcp.tool import fenced

logger = logging.getLogger(__name__)

STALE_CALL_SECONDS = 60.0  # far beyond a call's 10 s: its process is gone
CUT = (State.CALLING, State.CUT_SHORT)


def _reason(stored: str) -> ReplyReason:
    """The reason of the reply that asked (a person asked for it: only they could approve)."""
    try:
        return ReplyReason(stored)
    except ValueError:
        return ReplyReason.MENTION


class ApprovalJob(ConversationJob):
    def __init__(
        self,
        parts: JobParts,
        *,
        engine: AsyncEngine,
        slack: SlackClient,
        recorder: Recorder,
        servers: McpServers,
        loop: ToolLoop,
        history_limit: int,
    ) -> None:
        super().__init__(JobKind.REPLY, parts)  # a conversation's replies, one at a time
        self._engine = engine
        self._slack = slack
        self._servers = servers
        self._loop = loop
        self._limit = history_limit
        self._poster = Poster(slack=slack, recorder=recorder, identity=parts.identity)

    async def run(self, *, approval_id: int, **_timer: object) -> float | None:
        approval = await approvals.get(self._engine, int(approval_id))
        if approval is None or approval.state == State.DONE:
            return None
        return await self._guarded(
            approval.channel, approval.thread_ts, lambda: self._advance(approval), nothing=None
        )

    async def _advance(self, approval: McpApproval) -> float | None:
        assert approval.id is not None
        identifier = approval.id
        now, state = time.time(), State(approval.state)
        if state is State.PENDING:
            if now < approval.expires_at:
                return approval.expires_at
            if await approvals.expire(self._engine, approval.id):
                logger.info("approval %d: no decision in time, declined", approval.id)
                await update_card(self._slack, await self._again(approval), "expired")
        elif state is State.APPROVED:
            if await approvals.start_call(self._engine, approval.id):
                logger.info("approval %d: making the call", approval.id)
                await update_card(self._slack, approval, "approved")
                await self._call(approval)
        elif state in (State.CALLING, State.CUT_SHORT):
            started = approval.called_at or now
            if state is State.CALLING and now < started + STALE_CALL_SECONDS:
                return started + STALE_CALL_SECONDS  # being made now, elsewhere
            logger.warning("approval %d: its call was cut short; not made again", approval.id)
            told = self._told(approval, "interrupted")
            if await approvals.answer(self._engine, approval.id, result=told, was=CUT):
                await update_card(self._slack, approval, "cut_short")
        approval = await self._again(approval)
        if approval.state in DECLINED:
            told = self._told(approval, str(approval.state))
            await approvals.answer(self._engine, identifier, result=told, was=DECLINED)
            approval = await self._again(approval)
        if approval.state == State.ANSWERED:
            await self._go_on(approval)
            await approvals.finish(self._engine, identifier)
        return None

    async def _again(self, approval: McpApproval) -> McpApproval:
        assert approval.id is not None
        return await approvals.get(self._engine, approval.id) or approval

    async def _call(self, approval: McpApproval) -> None:
        """Make the approved call, once, and store what came of it."""
        assert approval.id is not None
        tool = self._servers.approved(approval.server, approval.tool)
        ok = False
        if tool is None:
            result = f"error: {approval.server}__{approval.tool} is no longer allowed; not made"
        else:
            try:
                answer = await self._servers.call(tool, json.loads(approval.arguments))
            except McpUnreachable as error:
                result = (
                    f"error: the {tool.server} server did not answer ({error}); the call may "
                    "not have been made"
                )
            except McpRefused as error:
                result = f"error: the {tool.server} server refused the call: {error}"
            else:
                ok = not answer.is_error
                result = fenced(tool, answer.text, error=answer.is_error).text
        logger.info("approval %d: the call was made (%s)", approval.id, "ok" if ok else "failed")
        told = self._told(approval, "approved", result=result)
        await approvals.answer(self._engine, approval.id, result=told, was=(State.CALLING,))
        await update_card(self._slack, approval, "called" if ok else "call_failed")

    def _told(self, approval: McpApproval, outcome: str, *, result: str = "") -> str:
        return render(
            "tools/mcp_decided.j2",
            outcome=outcome,
            user=approval.user_id,
            minutes=minutes(approval),
            result=result,
        ).strip()

    async def _go_on(self, approval: McpApproval) -> None:
        """The reply that continues the conversation with what came of the call, posted once."""
        if not approval.card_ts:
            return  # no card was posted: no one saw the question
        claim = await taking.claim(
            self._engine,
            channel=approval.channel,
            thread_ts=approval.thread_ts,
            trigger_ts=approval.card_ts,
            reason=_reason(approval.reason),
        )
        if claim is None:
            return  # answered already, or being answered
        async with ending.held(
            self._engine, claim.id, in_flight=lambda: self._poster.in_flight(claim.id)
        ):
            if claim.chunks is not None:  # taken over after posting began
                await self._deliver(claim, claim.chunks, look_first=True)
                return
            text, failure = await self._write(approval, claim)
            chunks = format_reply(text)
            await ending.store_chunks(self._engine, claim.id, chunks, error=failure)
            await self._deliver(replace(claim, error=failure), chunks, look_first=False)

    async def _write(self, approval: McpApproval, claim: Claim) -> tuple[str, str | None]:
        context = await self._context(approval.channel, approval.thread_ts)
        messages = reply_messages(
            context,
            Turns(
                trigger_ts=approval.trigger_ts,
                limit=self._limit,
                threaded=bool(approval.thread_ts),
            ),
        )
        call = ToolCall(
            id=approval.call_id,
            name=f"{approval.server}__{approval.tool}",
            arguments=approval.arguments,
        )
        messages[-1:-1] = [assistant_turn("", (call,)), tool_turn(call, approval.result or "")]
        # What fetch_url may fetch: the URLs people wrote in the conversation and those the
        # approved call's answer gave (app.tools.given), as in the reply that asked.
        given = GivenUrls(
            m.text for m in context.conversation_history.get_all_messages() if not m.from_self
        )
        given.add_result(approval.result or "", arguments=approval.arguments)
        asker = Asker(
            team_id=self._identity.team_id,
            channel=approval.channel,
            thread_ts=approval.thread_ts,
            user_id=approval.user_id,
            claim_id=claim.id,
            given=given,
        )
        try:
            answer = await self._loop.complete(messages, asker=asker)
        except LLMError as error:
            return apology(approval.language), str(error)
        if not format_reply(answer) or not usable(answer):
            return apology(approval.language), f"unusable answer: {answer[:80]!r}"
        return answer, None

    async def _deliver(self, claim: Claim, chunks: list[str], *, look_first: bool) -> None:
        done = await self._poster.post(claim, chunks, look_first=look_first)
        if done.error is None:
            status, error = (ReplyStatus.FAILED if claim.error else ReplyStatus.POSTED), claim.error
        elif done.error.uncertain or done.error.rate_limited or done.error.token_refused:
            status, error = ReplyStatus.UNCERTAIN, str(done.error)
        else:
            status, error = ReplyStatus.FAILED, str(done.error)
        await ending.settle(self._engine, claim, status=status, error=error, posted=done.posted)
