"""An event Slack delivered, from its payload to what it sets in motion: tomo's own or not,
read, routed, recorded durably, then its timers, the names to learn, a joined channel's history.

This is the acknowledgement's path: no Slack call and no model call happens here (names and
history are fetched in the background), only the recorder's commit, in whose transaction a
person's message to be judged is told a follow-up or not (one read shared by the messages
acknowledged together: app.conversation.timing.participation).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from app.context.directory import Directory
from app.conversation.routing import route_message
from app.conversation.timing.participation import Participation
from app.conversation.timing.policy import TimerPolicy
from app.db.conversation_facts import MembershipChanged
from app.db.erasure import Installed
from app.domain import Route
from app.observability.logs import log_context
from app.recording.recorder import Change, NewMessage, Outcome, Recorder
from app.slack.callbacks import parse_event
from app.slack.envelope import BadEnvelope, Envelope, install_proof, read_envelope
from app.slack.events import (
    AssistantOpened,
    ChannelGone,
    ChannelLeft,
    IncomingMessage,
    MemberJoined,
    MemberLeft,
    SlackEvent,
    WorkspaceGone,
)
from app.slack.identity import Identity

logger = logging.getLogger(__name__)


class Intake:
    def __init__(
        self,
        *,
        identity: Identity,
        recorder: Recorder,
        directory: Directory,
        timer_policy: TimerPolicy,
        participation: Participation,
        auto_reply_channels: frozenset[str],
        on_erasure: Callable[[], None] = lambda: None,
        on_assistant_opened: Callable[[AssistantOpened], None] = lambda _: None,
        on_refused: Callable[[], None] = lambda: None,
    ) -> None:
        """`on_erasure`: a channel or the workspace was taken away (app.retention.erase).
        `on_assistant_opened`: a person opened tomo's messages tab (suggested prompts, set in
        the background: app.conversation.suggested_prompts).
        `on_refused`: a message was stored while Slack refuses the token (after an uninstall,
        before the new token works): what it is owed waits until Slack takes the token."""
        self._identity = identity
        self._recorder = recorder
        self._directory = directory
        self._timer_policy = timer_policy
        self.participation = participation  # also what /tomo status asks
        self._auto_reply_channels = auto_reply_channels
        self._on_erasure = on_erasure
        self._on_assistant_opened = on_assistant_opened
        self._on_refused = on_refused

    async def take(self, payload: dict[str, Any], *, retry: str | None, why: str | None) -> bool:
        """Record the event and act on it; False when it could not be recorded (Slack should
        deliver it again). `retry` and `why`: Slack's X-Slack-Retry-Num and -Reason."""
        try:
            envelope = read_envelope(payload)
            foreign = self._identity.foreign(envelope)
            if foreign is None:
                event, change = self._read(envelope)
                installed = self._installed(envelope, change)
        except BadEnvelope as bad:
            logger.warning("rejected an event: %s", bad)
            return True
        except Exception:  # a payload shape no guard foresaw: acknowledged, so Slack stops
            logger.exception("rejected an event tomo could not read")
            return True
        if foreign is not None:
            with log_context(event_id=envelope.event_id):
                logger.info("event for %s acknowledged and ignored", foreign)
            return True
        with self._context(envelope.event_id, change):
            if retry:
                logger.info("slack retry %s (%s)", retry, why)
            try:
                outcome = await self._recorder.record(
                    event_id=envelope.event_id, change=change, installed=installed
                )
            except Exception:
                return False
            return await self._act(outcome, event, change)

    @staticmethod
    def _context(event_id: str | None, change: Change) -> AbstractContextManager[None]:
        """The log lines' context: the event, and a new message's channel and conversation."""
        if isinstance(change, NewMessage):
            return log_context(
                event_id=event_id,
                channel=change.message.channel,
                thread_ts=change.route.conversation_ts,
            )
        return log_context(event_id=event_id)

    async def _act(self, outcome: Outcome, event: SlackEvent | None, change: Change) -> bool:
        """What follows the record; False when Slack should deliver the event again."""
        if outcome.lifted:
            logger.info("an event delivered after the uninstall: tomo is installed again")
        if outcome.deferred:
            logger.warning(
                "the app is installed again while its uninstall's deletion still runs: "
                "the message is not stored yet, Slack delivers it again"
            )
            return False
        if outcome.rejected:
            logger.warning("acknowledged an event the database refused; nothing was recorded")
            return True
        if outcome.duplicate:
            logger.info("duplicate delivery acknowledged, not processed again")
            return True
        match event, change:
            case _, NewMessage() if outcome.applied:
                await self._new_message(change, outcome.route or change.route)
            case MemberJoined(channel=channel, user_id=user_id), _ if (
                user_id == self._identity.user_id
            ):
                logger.info("joined %s; fetching its recent history", channel)
                self._directory.on_bot_joined(channel)
            case AssistantOpened(), _:
                self._on_assistant_opened(event)
            case _, ChannelLeft(channel=channel):
                logger.info("removed from %s: nothing more of it is stored", channel)
            case _, ChannelGone() | WorkspaceGone():
                logger.warning("%s: deleting everything kept of it", change)
                self._on_erasure()
        return True

    async def _new_message(self, change: NewMessage, route: Route) -> None:
        """A new message recorded (`route`: as recorded, a follow-up perhaps): its timers set,
        its author's name to learn; or, while Slack refuses the token, left owed."""
        if self._identity.refused:
            logger.info(
                "message %s stored; Slack refuses the token, so it is answered once "
                "the token works again",
                change.message.ts,
            )
            self._on_refused()
            return
        try:
            await self._timer_policy.on_new_message(change.message, route)
        except Exception:  # the job database failed; the message is recorded
            logger.exception("setting the timers of message %s failed", change.message.ts)
        self._directory.note_people([change.message.user_id])
        logger.info("message %s routed to %s", change.message.ts, route.kind.value)

    def _installed(self, envelope: Envelope, change: Change) -> Installed | None:
        """The proof of install this event carries (never an uninstall's own event)."""
        if isinstance(change, WorkspaceGone):
            return None
        proof = install_proof(envelope, bot_user_id=self._identity.user_id)
        return Installed(*proof) if proof is not None else None

    def _read(self, envelope: Envelope) -> tuple[SlackEvent | None, Change]:
        """The event, and the change it asks of the database."""
        self._identity.know_from_event(envelope)
        event = parse_event(envelope)
        if isinstance(event, IncomingMessage):
            route = route_message(
                event,
                bot_user_id=self._identity.user_id,
                auto_reply_channels=self._auto_reply_channels,
                bot_users=self._directory.bot_users,
            )
            return event, NewMessage(event, route)
        if isinstance(event, MemberJoined | MemberLeft) and event.user_id != self._identity.user_id:
            # Someone else: what they (and the conversation) may be shown changes now.
            return event, MembershipChanged(channel=event.channel, user_id=event.user_id)
        if isinstance(event, MemberJoined):
            return event, event  # tomo invited (back) into a channel: stored again from now on
        if isinstance(event, MemberLeft):
            return event, ChannelLeft(channel=event.channel)  # tomo removed: as `channel_left`
        if isinstance(event, AssistantOpened):
            return event, None  # nothing to store; its event id is, so it is offered once
        if isinstance(event, WorkspaceGone) and event.reason == "tokens_revoked":
            mine = self._identity.user_id
            if mine is not None and mine not in event.bot_users:
                return event, None  # another bot's token
        return event, event
