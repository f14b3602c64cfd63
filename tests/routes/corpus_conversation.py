"""The corpus's cases of people talking to each other, and of their messages changing: what
tomo must store, judge and answer (the cases' shape: tests/routes/corpus_cases.py)."""

from __future__ import annotations

from tests.routes.corpus_cases import (
    PLAIN_ANSWERED,
    Case,
    P,
    R,
    Row,
    dm_with_alice,
)

CONVERSATION: dict[str, Case] = {
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
    # A PDF and a snippet whose URLs name files.slack.com: with SLACK_API_URL on a stand-in,
    # that host is not Slack's file host here, so nothing is downloaded and they are named.
    "message_file_share_pdf": Case(
        send=("message_file_share_pdf",),
        row=Row(
            "1700000121.000100",
            route="judgment",
            text_has=("Here is the plan for the trip", "[file: trip-plan.pdf]"),
        ),
        judged="1700000121.000100",
        posted="C1",
        last_turn_has=("what do you think?\n[file: trip-plan.pdf]",),
    ),
    "message_file_share_snippet": Case(
        send=("message_file_share_snippet",),
        row=Row("1700000122.000100", route="judgment", text_has=("[file: deploy.log]",)),
        judged="1700000122.000100",
        posted="C1",
        last_turn_has=("why does this fail?\n[file: deploy.log]",),
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
}
