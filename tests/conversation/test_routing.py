from app.conversation.routing import route_message
from app.domain import RouteKind
from app.slack.events import IncomingMessage


def message(**overrides: object) -> IncomingMessage:
    fields: dict[str, object] = {
        "channel": "C1",
        "ts": "1700000000.000100",
        "team_id": "T1",
        "thread_ts": "",
        "user_id": "U1",
        "bot_id": None,
        "text": "hello",
        "subtype": None,
        "channel_type": "channel",
    }
    fields.update(overrides)
    return IncomingMessage(**fields)  # type: ignore[arg-type]


def route(msg: IncomingMessage, auto: frozenset[str] = frozenset(), bots=frozenset()):  # type: ignore[no-untyped-def]
    return route_message(msg, bot_user_id="UBOT", auto_reply_channels=auto, bot_users=bots)


def test_plain_message_goes_to_judgment_of_its_conversation() -> None:
    assert route(message()).kind is RouteKind.JUDGMENT
    assert route(message()).conversation_ts == ""
    in_thread = route(message(thread_ts="1700000000.000001"))
    assert (in_thread.kind, in_thread.conversation_ts) == (RouteKind.JUDGMENT, "1700000000.000001")


def test_bots_and_self_and_system_messages_are_record_only() -> None:
    assert route(message(bot_id="B2")).kind is RouteKind.RECORD
    assert route(message(user_id=None, subtype="bot_message")).kind is RouteKind.RECORD
    assert route(message(user_id="UBOT", text="<@UBOT> hi")).kind is RouteKind.RECORD
    assert route(message(subtype="channel_join")).kind is RouteKind.RECORD


def test_top_level_mention_gets_its_own_thread() -> None:
    result = route(message(text="<@UBOT> hi"))
    assert (result.kind, result.conversation_ts, result.reason) == (
        RouteKind.REPLY,
        "1700000000.000100",
        "mention",
    )


def test_mention_in_thread_stays_in_thread_and_app_mention_counts() -> None:
    result = route(message(thread_ts="1700000000.000001", app_mention=True))
    assert (result.kind, result.conversation_ts) == (RouteKind.REPLY, "1700000000.000001")


def test_direct_message_answered_where_written() -> None:
    result = route(message(channel="D1", channel_type="im"))
    assert (result.kind, result.conversation_ts, result.reason) == (RouteKind.REPLY, "", "dm")


def test_auto_reply_channel_and_file_share_and_broadcast() -> None:
    assert route(message(), frozenset({"C1"})).reason == "auto_reply"
    assert route(message(subtype="file_share")).kind is RouteKind.JUDGMENT
    assert route(message(subtype="thread_broadcast", thread_ts="1.0")).kind is RouteKind.JUDGMENT


def test_slackbot_and_known_bot_users_are_record_only_even_when_they_mention_tomo() -> None:
    assert route(message(user_id="USLACKBOT", channel_type="im")).kind is RouteKind.RECORD
    assert route(message(user_id="USLACKBOT", text="Reminder: standup.")).kind is RouteKind.RECORD
    legacy = message(user_id="U7", text="<@UBOT> status: green")
    assert route(legacy).kind is RouteKind.REPLY  # not known to be a bot yet
    assert route(legacy, bots=frozenset({"U7"})).kind is RouteKind.RECORD


def test_a_message_with_nothing_to_read_is_record_only() -> None:
    assert route(message(text="")).kind is RouteKind.RECORD
    assert route(message(text="  \n", channel_type="im")).kind is RouteKind.RECORD


def test_every_system_subtype_is_record_only() -> None:
    for subtype in (
        "channel_topic",
        "channel_purpose",
        "pinned_item",
        "huddle_thread",
        "reminder_add",
    ):
        assert route(message(subtype=subtype, text="<@UBOT> look")).kind is RouteKind.RECORD
