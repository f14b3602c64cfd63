"""The corpus's cases of bots, Slack's own notes and Slackbot: read and recorded, never a
trigger (the cases' shape: tests/routes/corpus_cases.py)."""

from __future__ import annotations

from tests.routes.corpus_cases import (
    PLAIN_ANSWERED,
    Case,
    Row,
    bot_users,
    legacy_bot_user,
    slackbot_dm,
    system_note,
)

NOT_PEOPLE: dict[str, Case] = {
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
}
