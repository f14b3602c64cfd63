"""A case of the payload corpus (docs/how-tomo-works.md#ingress), and the workspaces its cases start
from.

A case sends fixtures in order through the signed endpoint, against a workspace prepared by
its `setup`, and says what must then be true: the row stored for one message (`row`), whether
the conversation was judged and answered, where the answer went, and what the model was
shown. Timestamps are the fixtures' own: the runner moves them all to the last minutes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tests.fakes import FakeSlack

Shift = Callable[[str], str]  # a fixture's ts -> the ts it was sent with
Setup = Callable[[FakeSlack, Shift], None]

P = "1700000100.000100"  # message_plain, later a thread's parent
R = "1700000160.000200"  # message_thread_reply
THREAD = "1700000010.000100"  # the thread of app_mention_in_thread, known to Slack only


@dataclass(frozen=True)
class Row:
    """The stored message at `ts` (None: there must be none; deleted: it was, and its row is
    gone)."""

    ts: str
    channel: str = "C1"
    kind: str | None = "conversational"
    route: str | None = None
    thread_ts: str | None = None  # a fixture ts, "" for the top level
    text_has: tuple[str, ...] = ()
    deleted: bool = False
    edited: bool | None = None


@dataclass(frozen=True)
class Case:
    send: tuple[str, ...]
    row: Row | None = None
    absent: tuple[str, ...] = ()  # (fixture) ts of which no message may be stored
    judged: str | None = None  # the (fixture) ts of the message judged; None: no judgment
    posted: str | None = None  # where tomo answered: "C1", "C1 > <thread ts>"; None: silence
    last_turn_has: tuple[str, ...] = ()
    prompt_has: tuple[str, ...] = ()
    prompt_lacks: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()  # Slack methods tomo must have called
    setup: Setup | None = None
    extra: dict[str, object] = field(default_factory=dict)


def dm_with_alice(slack: FakeSlack, _: Shift) -> None:
    slack.add_channel("D1", "", is_im=True, user="U1")


def bot_users(slack: FakeSlack, _: Shift) -> None:
    slack.add_user("U0GITHUB", name="github", real_name="GitHub", is_bot=True, bot_id="B0GITHUB")
    slack.add_user(
        "U0CIRCLE", name="circleci", real_name="CircleCI", is_bot=True, bot_id="B0CIRCLE"
    )
    slack.add_user("U0OTHERBOT", name="other-app", real_name="other-app", is_bot=True)
    slack.add_bot("B0BACKUP", name="backup-bot")
    slack.add_bot("B0JENKINS", name="jenkins")


def legacy_bot_user(slack: FakeSlack, _: Shift) -> None:
    """A bot user from before apps: users.info says is_bot, and it has no bot_id."""
    slack.add_user("U0LEGACY", name="statusbot", real_name="Status bot", is_bot=True)


def slackbot_dm(slack: FakeSlack, _: Shift) -> None:
    slack.add_channel("D0SLACKBOT", "", is_im=True, user="USLACKBOT")


def group_dm(slack: FakeSlack, _: Shift) -> None:
    slack.add_channel("G1", "mpdm-alice--bob--tomo-1", is_mpim=True)


def late_channel(slack: FakeSlack, _: Shift) -> None:
    """A channel the directory has not listed yet: conversations.info knows its name."""
    slack.add_channel("C9", "late-channel", member=False)


def thread_known_to_slack(slack: FakeSlack, shift: Shift, *, deleted: bool = False) -> None:
    """A thread whose parent and first reply tomo never received; Carol (U3) is in no
    directory yet: she is seen only in conversations.replies."""
    slack.add_user("U3", name="carol", display_name="Carol")
    slack.add_message("C1", ts=shift(THREAD), text="who can review the runbook?", user="U2")
    reply = shift("1700000020.000100")
    slack.add_message("C1", ts=reply, text="I can, after lunch", user="U3", thread_ts=shift(THREAD))
    slack.add_message(
        "C1",
        ts=shift("1700000190.000100"),
        text="<@UBOT> can you sum this up?",
        user="U1",
        thread_ts=shift(THREAD),
    )
    if deleted:
        slack.delete_parent("C1", shift(THREAD))


def people_elsewhere(slack: FakeSlack, _: Shift) -> None:
    slack.add_user("W0DANA", name="dana", display_name="Dana")
    slack.add_user("U0EXT", name="eve", display_name="Eve (Partner Co)")


def history_on_join(slack: FakeSlack, shift: Shift) -> None:
    """#random as conversations.history gives it when tomo joins: a message, tomo's own join
    note, and a thread whose parent was deleted (its tombstone)."""
    slack.add_message("C2", ts=shift("1700000030.000100"), text="welcome, everyone!", user="U2")
    slack.add_message(
        "C2",
        ts=shift("1700000031.000100"),
        text="<@UBOT> has joined the channel",
        user="UBOT",
        subtype="channel_join",
        inviter="U1",
    )
    slack.add_message("C2", ts=shift("1700000032.000100"), text="gone soon", user="U1")
    slack.add_message(
        "C2",
        ts=shift("1700000033.000100"),
        text="a reply that stays",
        user="U2",
        thread_ts=shift("1700000032.000100"),
    )
    slack.delete_parent("C2", shift("1700000032.000100"))


PLAIN_ANSWERED = {
    "judged": P,
    "posted": "C1",
    "last_turn_has": ("<@U1> (Alice): Does anyone know why the staging deploy is stuck?",),
}


def system_note(name: str, ts: str, *, shows: str | None) -> Case:
    """A note of Slack's arriving during the quiet wait after a question: the question is
    still the message judged and answered, and the note is shown as a note at most."""
    return Case(
        send=("message_plain", name),
        row=Row(ts, kind="system", route="record"),
        prompt_has=(f"[note from Slack, not a message] {shows}",) if shows else (),
        **PLAIN_ANSWERED,  # type: ignore[arg-type]
    )
