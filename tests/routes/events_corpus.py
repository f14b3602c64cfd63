"""What tomo must do with each payload of tests/fixtures/slack/ (SPEC §3.1-§3.3).

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
    """The stored message at `ts` (None: there must be none)."""

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


CASES: dict[str, Case] = {
    # People talking: judged after the quiet wait, then answered (the model says respond).
    "message_plain": Case(
        send=("message_plain",),
        row=Row(P, route="judgment", thread_ts="", text_has=("staging deploy is stuck",)),
        **PLAIN_ANSWERED,  # type: ignore[arg-type]
    ),
    "message_thread_reply": Case(
        send=("message_plain", "message_thread_reply"),
        row=Row(R, route="judgment", thread_ts=P),
        judged=R,
        posted=f"C1 > {P}",
        last_turn_has=("<@U2> (Bob): I think the runner is out of disk again",),
    ),
    "message_thread_broadcast": Case(
        send=("message_plain", "message_thread_broadcast"),
        row=Row("1700000170.000300", route="judgment", thread_ts=P),
        judged="1700000170.000300",
        posted=f"C1 > {P}",
        last_turn_has=("Fixed: the runner has disk again",),
    ),
    "message_me": Case(
        send=("message_me",),
        row=Row("1700000110.000100", route="judgment", text_has=("is doing that thing",)),
        judged="1700000110.000100",
        posted="C1",
        last_turn_has=("<@U1> (Alice): is doing that thing",),
    ),
    "message_file_share": Case(
        send=("message_file_share",),
        row=Row(
            "1700000120.000100",
            route="judgment",
            text_has=("Here is the error screen", "[file: deploy-error.png]"),
        ),
        judged="1700000120.000100",
        posted="C1",
        last_turn_has=("Here is the error screen\n[file: deploy-error.png]",),
    ),
    "message_file_share_connect_dm": Case(
        send=("message_file_share_connect_dm",),
        setup=dm_with_alice,
        row=Row("1700000125.000100", channel="D1", route="reply", text_has=("[file: file]",)),
        posted="D1",
        last_turn_has=("can you read this log?\n[file: file]",),
    ),
    "message_rich_text_blocks_only": Case(
        send=("message_rich_text_blocks_only",),
        row=Row(
            "1700000130.000100",
            route="judgment",
            text_has=(
                "• [a message in <#C2>]\n• <https://example.com/runbook>",
                "> the runner keeps failing on step 3",
                "```\nNo space left on device\n<https://example.com/logs/42>\n```",
            ),
        ),
        judged="1700000130.000100",
        posted="C1",
        last_turn_has=("the runner keeps failing on step 3",),
    ),
    "message_link": Case(
        send=("message_link",),
        row=Row("1700000140.000100", route="judgment"),
        judged="1700000140.000100",
        posted="C1",
    ),
    "message_forwarded": Case(
        send=("message_forwarded",),
        row=Row(
            "1700000150.000100",
            route="judgment",
            text_has=("[shared message from <@U2> (Bob)]\n> the release is moved to Friday",),
        ),
        judged="1700000150.000100",
        posted="C1",
        last_turn_has=("<@U1> (Alice): [shared message from <@U2> (Bob)]",),
    ),
    "message_shared_with_comment_dm": Case(
        send=("message_shared_with_comment_dm",),
        setup=dm_with_alice,
        row=Row("1700000155.000100", channel="D1", route="reply"),
        posted="D1",
        last_turn_has=(
            "what do you make of this?\n[shared message from <@U2> (Bob)]\n"
            "> the release is moved to Friday",
        ),
    ),
    "message_shared_legacy": Case(
        send=("message_shared_legacy",),
        row=Row("1700000158.000100", route="judgment", text_has=("> lunch at noon?",)),
        judged="1700000158.000100",
        posted="C1",
    ),
    # Changes.
    "message_changed_edit": Case(
        send=("message_plain", "message_changed_edit"),
        row=Row(P, route="judgment", text_has=("prod deploy is stuck",), edited=True),
        judged=P,
        posted="C1",
        prompt_has=("(edited)",),
        last_turn_has=("Does anyone know why the prod deploy is stuck?",),
    ),
    "message_changed_unfurl": Case(
        send=("message_link", "message_changed_unfurl"),
        row=Row(
            "1700000140.000100",
            route="judgment",
            text_has=("> the release is moved to Friday",),
            edited=False,
        ),
        judged="1700000140.000100",
        posted="C1",
        prompt_lacks=("(edited)",),
        last_turn_has=("[shared message from <@U2> (bob)]",),
    ),
    "message_deleted": Case(
        send=("message_plain", "message_deleted"),
        row=Row(P, route="judgment", deleted=True),
        prompt_lacks=("staging deploy",),
    ),
    "message_changed_tombstone": Case(
        send=("message_plain", "message_thread_reply", "message_changed_tombstone"),
        row=Row(P, route="judgment", deleted=True),
        judged=R,
        posted=f"C1 > {P}",
        prompt_lacks=("This message was deleted.", "USLACKBOT", "staging deploy"),
        last_turn_has=("I think the runner is out of disk again",),
    ),
    "message_deleted_tombstone": Case(
        send=("message_plain", "message_deleted_tombstone"),
        row=Row(P, route="judgment", deleted=True),
    ),
    "message_replied": Case(
        send=("message_plain", "message_replied"),
        row=Row(P, route="judgment"),
        absent=("1700000161.000300",),
        **PLAIN_ANSWERED,  # type: ignore[arg-type]
    ),
    # Bots and integrations: read, recorded, never a trigger.
    "bot_message_github": Case(
        send=("bot_message_github",),
        setup=bot_users,
        row=Row(
            "1700000090.000100",
            route="record",
            text_has=(
                "Issue created by <https://github.com/alice|alice>",
                "#2 staging runner out of disk",
                "no space left on device",
            ),
        ),
    ),
    "bot_message_in_a_later_prompt": Case(
        send=("bot_message_github", "message_plain"),
        setup=bot_users,
        row=Row("1700000090.000100", route="record"),
        prompt_has=("GitHub (bot):", "#2 staging runner out of disk"),
        **PLAIN_ANSWERED,  # type: ignore[arg-type]
    ),
    "bot_message_circleci_blocks": Case(
        send=("bot_message_circleci_blocks",),
        setup=bot_users,
        row=Row(
            "1700000092.000100",
            route="record",
            text_has=("Job Failed. :red_circle:", "*Job*: deploy-staging", "*Branch*: main"),
        ),
    ),
    "bot_message_classic": Case(
        send=("bot_message_classic", "message_plain"),
        setup=bot_users,
        row=Row("1700000094.001600", route="record", text_has=("Nightly backup finished",)),
        prompt_has=("backup-bot (bot):",),
        **PLAIN_ANSWERED,  # type: ignore[arg-type]
    ),
    "bot_message_legacy_attachments": Case(
        send=("bot_message_legacy_attachments",),
        setup=bot_users,
        row=Row(
            "1700000096.000200",
            route="record",
            text_has=(
                "Build notification",
                "<https://ci.example.com/job/deployer/128/|deployer #128>",
                "Build failed after 3 min",
                "Branch: main",
            ),
        ),
    ),
    "bot_message_app": Case(
        send=("bot_message_app",),
        setup=bot_users,
        row=Row("1700000098.000900", route="record"),
    ),
    "message_email_slackbot": Case(
        send=("message_email_slackbot",),
        row=Row("1700000099.292829", route="record", text_has=("[file: Weekly report]",)),
    ),
    "message_legacy_bot_user": Case(
        send=("message_legacy_bot_user",),
        setup=legacy_bot_user,
        row=Row("1700000175.000100"),
        calls=("users.info",),
    ),
    # Slack's own notes during the quiet wait after a question.
    "system_channel_join": system_note(
        "system_channel_join", "1700000102.728809", shows="<@U2> has joined the channel"
    ),
    "system_channel_leave": system_note(
        "system_channel_leave", "1700000102.728810", shows="<@U2> has left the channel"
    ),
    "system_channel_topic": system_note(
        "system_channel_topic", "1700000102.728811", shows="<@U2> set the channel topic: deploys"
    ),
    "system_channel_purpose": system_note(
        "system_channel_purpose", "1700000102.728812", shows="<@U2> set the channel purpose"
    ),
    "system_channel_name": system_note(
        "system_channel_name", "1700000102.728813", shows="<@U2> renamed the channel"
    ),
    "system_pinned_item": system_note(
        "system_pinned_item", "1700000102.728814", shows="<@U2> pinned a message"
    ),
    "system_huddle_thread": system_note("system_huddle_thread", "1700000102.728815", shows=None),
    "system_reminder_add": system_note(
        "system_reminder_add", "1700000102.728816", shows="set up a reminder"
    ),
    # Slackbot: never a person.
    "slackbot_reminder": Case(
        send=("slackbot_reminder",),
        row=Row("1700000103.000100", route="record", text_has=("Reminder: deploy review.",)),
    ),
    "slackbot_dm": Case(
        send=("slackbot_dm",),
        setup=slackbot_dm,
        row=Row("1700000104.425039", channel="D0SLACKBOT", route="record"),
    ),
    # To tomo: answered at once.
    "app_mention": Case(
        send=("app_mention",),
        row=Row("1700000180.009600", route="reply"),
        posted="C1 > 1700000180.009600",
        last_turn_has=("<@U1> (Alice): <@UBOT> Hi there! Can you help with the deploy?",),
    ),
    "message_mention": Case(
        send=("message_mention", "app_mention"),
        row=Row("1700000180.009600", route="reply"),
        posted="C1 > 1700000180.009600",
    ),
    "message_im": Case(
        send=("message_im",),
        setup=dm_with_alice,
        row=Row("1700000185.009629", channel="D1", route="reply"),
        posted="D1",
        last_turn_has=("<@U1> (Alice): are you around?",),
    ),
    "message_mpim": Case(
        send=("message_mpim",),
        setup=group_dm,
        row=Row("1700000186.000100", channel="G1", route="judgment"),
        judged="1700000186.000100",
        posted="G1",
    ),
    "app_mention_late_channel": Case(
        send=("app_mention_late_channel",),
        setup=late_channel,
        row=Row("1700000187.000100", channel="C9", route="reply"),
        posted="C9 > 1700000187.000100",
        prompt_has=("#late-channel",),
        calls=("conversations.info",),
    ),
    "app_mention_in_thread": Case(
        send=("app_mention_in_thread",),
        setup=thread_known_to_slack,
        row=Row("1700000190.000100", route="reply", thread_ts=THREAD),
        posted=f"C1 > {THREAD}",
        prompt_has=("<@U2> (Bob): who can review the runbook?", "<@U3> (Carol): I can"),
        calls=("conversations.replies", "users.info"),
    ),
    "app_mention_in_thread_deleted_parent": Case(
        send=("app_mention_in_thread",),
        setup=lambda slack, shift: thread_known_to_slack(slack, shift, deleted=True),
        row=Row("1700000190.000100", route="reply", thread_ts=THREAD),
        absent=(THREAD,),
        posted=f"C1 > {THREAD}",
        prompt_has=("<@U3> (Carol): I can",),
        prompt_lacks=("This message was deleted.", "USLACKBOT", "runbook?"),
    ),
    "app_mention_enterprise_grid": Case(
        send=("app_mention_enterprise_grid",),
        setup=people_elsewhere,
        row=Row("1700000192.000100", route="reply"),
        posted="C1 > 1700000192.000100",
        last_turn_has=("<@W0DANA> (Dana): <@UBOT> hello from the org",),
    ),
    "message_shared_channel": Case(
        send=("message_shared_channel",),
        setup=people_elsewhere,
        row=Row("1700000194.000100", route="judgment"),
        judged="1700000194.000100",
        posted="C1",
        last_turn_has=("<@U0EXT> (Eve (Partner Co)): hi from the partner company",),
    ),
    # Not for tomo: acknowledged, nothing else.
    "app_mention_other_workspace": Case(
        send=("app_mention_other_workspace",), absent=("1700000196.000100",)
    ),
    "app_mention_other_app": Case(send=("app_mention_other_app",), absent=("1700000197.000100",)),
    "member_joined_channel_person": Case(send=("member_joined_channel_person",)),
    "member_joined_channel_tomo": Case(
        send=("member_joined_channel_tomo",),
        setup=history_on_join,
        row=Row("1700000031.000100", channel="C2", kind="system", route="record"),
        absent=("1700000032.000100",),
        calls=("conversations.history",),
        extra={"stored_in_C2": 2},
    ),
    "app_home_opened": Case(send=("app_home_opened",)),
}
