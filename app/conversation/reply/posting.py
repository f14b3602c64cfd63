"""Posting a claim's messages at most once each, whatever Slack answers (docs/how-tomo-
works.md#reply).

Every post carries Slack message metadata naming its claim and its place in the reply. A post
Slack answered with a 5xx, a timeout or an unreadable body may be in Slack all the same: it is
looked up by that metadata (conversations.replies / .history with include_all_metadata) and
only sent again when it is not there. When even the look-up cannot tell, delivery stops and
the claim stays owed (`uncertain`): the next one to take it over looks again first.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from app.conversation.claims.taking import Claim
from app.recording.recorder import Recorder
from app.slack.events import IncomingMessage
from app.slack.identity import Identity
from app.slack.interactive.feedback_blocks import FeedbackButtons
from app.slack.web.client import SlackClient, SlackError

logger = logging.getLogger(__name__)

EVENT_TYPE = "tomo_reply"
POST_ATTEMPTS = 3  # per message, each after a look-up found it missing
LOOKUP_PAUSE_SECONDS = 0.5  # Slack's answer came back broken: give its timeline a moment


@dataclass
class Posted:
    posted: list[str] = field(default_factory=list)  # the ts of each message, in order
    error: SlackError | None = None  # why delivery stopped; `uncertain`: it may resume


def metadata(claim: Claim, chunk: int) -> dict[str, Any]:
    payload = {"claim": claim.id, "trigger_ts": claim.trigger_ts, "chunk": chunk}
    return {"event_type": EVENT_TYPE, "event_payload": payload}


class Poster:
    def __init__(
        self,
        *,
        slack: SlackClient,
        recorder: Recorder,
        identity: Identity,
        buttons: FeedbackButtons | None = None,
    ) -> None:
        self._slack = slack
        self._recorder = recorder
        self.identity = identity
        # The reply's last message ends with the feedback buttons
        # (app.slack.interactive.feedback_blocks).
        self.buttons = buttons or FeedbackButtons()
        self._in_flight: dict[int, asyncio.Task[str]] = {}

    def in_flight(self, claim_id: int) -> asyncio.Task[str] | None:
        """The claim's post still under way (it outlives a cancelled job: see
        app.conversation.claims.ending.held)."""
        return self._in_flight.get(claim_id)

    async def post(self, claim: Claim, chunks: list[str], *, look_first: bool) -> Posted:
        """Post each chunk once, in order. With `look_first` (a claim taken over), the ones
        already in Slack are found first and not posted again."""
        done = Posted()
        try:
            found = await self._find(claim) if look_first else {}
        except SlackError as error:
            done.error = _as_uncertain(error)
            return done
        for number, text in enumerate(chunks):
            if number in found:
                await self.store(claim, found[number], text)
                done.posted.append(found[number])
                continue
            # Shielded: a post Slack may be receiving is seen through (and stored) even when
            # the job is cancelled.
            last = number == len(chunks) - 1
            post = asyncio.ensure_future(self._post(claim, number, text, last=last))
            self._in_flight[claim.id] = post
            post.add_done_callback(lambda finished: self._settled(claim.id, finished))
            try:
                ts = await asyncio.shield(post)
            except SlackError as error:
                done.error = error
                return done
            done.posted.append(ts)
        return done

    def _settled(self, claim_id: int, post: asyncio.Task[str]) -> None:
        if self._in_flight.get(claim_id) is post:
            del self._in_flight[claim_id]
        if not post.cancelled():
            post.exception()  # seen here, whether or not the job still waits for it

    async def _post(self, claim: Claim, number: int, text: str, *, last: bool) -> str:
        """Post one chunk and store it; a SlackError that is `uncertain` only once neither the
        posts nor the look-ups could settle whether Slack has it."""
        for attempt in range(1, POST_ATTEMPTS + 1):
            try:
                ts = await self._send(claim, number, text, last=last)
            except SlackError as error:
                if not error.uncertain:
                    raise
                logger.warning(
                    "post %d of claim %d may have gone through: %s", number, claim.id, error
                )
                await asyncio.sleep(LOOKUP_PAUSE_SECONDS)
                found = await self._find(claim)  # a SlackError here: still uncertain
                if number in found:
                    ts = found[number]
                    logger.info("post %d of claim %d is in Slack as %s", number, claim.id, ts)
                elif attempt == POST_ATTEMPTS:
                    raise
                else:
                    logger.info(
                        "post %d of claim %d is not in Slack: posting it again", number, claim.id
                    )
                    continue
            await self.store(claim, ts, text)
            return ts
        raise AssertionError("unreachable")  # the last attempt returns or raises

    async def _send(self, claim: Claim, number: int, text: str, *, last: bool) -> str:
        """One chat.postMessage; the last message with the feedback buttons, sent again
        without them when Slack refused them (a refusal is certain: nothing was posted)."""
        blocks = self.buttons.for_post(claim.id, text) if last else None
        return await self.buttons.sent(
            blocks,
            lambda blocks: self._slack.post_message(
                channel=claim.channel,
                text=text,
                thread_ts=claim.thread_ts or None,
                metadata=metadata(claim, number),
                blocks=blocks,
            ),
        )

    async def _find(self, claim: Claim) -> dict[int, str]:
        """The claim's messages Slack has, by their place in the reply."""
        try:
            messages = await self._slack.posts_with_metadata(
                channel=claim.channel,
                thread_ts=claim.thread_ts,
                after_ts=claim.trigger_ts,
                event_type=EVENT_TYPE,
            )
        except SlackError as error:
            raise _as_uncertain(error) from error
        found: dict[int, str] = {}
        for message in messages:
            payload = message["metadata"].get("event_payload")
            if not isinstance(payload, dict) or str(payload.get("claim")) != str(claim.id):
                continue
            if str(payload.get("trigger_ts")) != claim.trigger_ts:
                continue  # another database's claim of the same number
            try:
                found.setdefault(int(payload.get("chunk", -1)), str(message["ts"]))
            except (TypeError, ValueError):
                continue
        return found

    async def store(self, claim: Claim, ts: str, text: str) -> None:
        me = self.identity
        message = IncomingMessage(
            channel=claim.channel,
            ts=ts,
            team_id=me.team_id or "",
            thread_ts=claim.thread_ts,
            user_id=me.user_id,
            bot_id=me.bot_id,
            text=text,
            subtype=None,
            channel_type=None,
        )
        await self._recorder.store([message])  # through the gate: not in a channel tomo left


def _as_uncertain(error: SlackError) -> SlackError:
    """A look-up that failed leaves the post's outcome unknown, whatever the look-up's error."""
    return SlackError(error.method, error.error, rate_limited=error.rate_limited, uncertain=True)
