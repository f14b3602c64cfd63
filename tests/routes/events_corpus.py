"""What tomo must do with each payload of tests/fixtures/slack/ (docs/how-tomo-works.md#ingress):
the cases of messages to tomo and of events that are not for it, and every case by name."""

from __future__ import annotations

from app.slack.events import REMOVALS
from tests.routes.corpus_cases import (
    THREAD,
    Case,
    Row,
    dm_with_alice,
    group_dm,
    history_on_join,
    late_channel,
    people_elsewhere,
    thread_known_to_slack,
)
from tests.routes.corpus_conversation import CONVERSATION
from tests.routes.corpus_not_people import NOT_PEOPLE

TO_TOMO: dict[str, Case] = {
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
    # Someone else left: tomo goes on storing the channel.
    "member_left_channel_person": Case(
        send=("member_left_channel_person", "message_plain"),
        row=Row("1700000100.000100", route="judgment"),
        judged="1700000100.000100",
        posted="C1",
    ),
}

# Slack took something away (docs/data-and-privacy.md): a message arriving after it is
# acknowledged and not stored, nothing is judged or posted.
TAKEN_AWAY: dict[str, Case] = {
    name: Case(send=(name, "message_plain"), absent=("1700000100.000100",))
    for name in sorted(REMOVALS | {"member_left_channel_tomo"})
}

CASES: dict[str, Case] = {**CONVERSATION, **NOT_PEOPLE, **TO_TOMO, **TAKEN_AWAY}
