import pytest

from app.conversation.judgment.answer import InvalidVerdict, parse_verdict


def test_plain_json() -> None:
    verdict = parse_verdict(
        '{"should_respond": true, "reason": "a question", "confidence": 0.8, "delay_seconds": 30}',
        max_delay=600,
    )
    assert verdict.should_respond is True
    assert verdict.reason == "a question"
    assert verdict.confidence == 0.8
    assert verdict.delay_seconds == 30


def test_code_fence_and_chatter_around_the_object() -> None:
    text = 'Sure! Here it is:\n```json\n{"should_respond": false, "reason": "closed"}\n```\nBye'
    verdict = parse_verdict(text, max_delay=600)
    assert verdict.should_respond is False
    assert verdict.reason == "closed"
    assert verdict.delay_seconds is None


def test_delay_is_clamped_both_ways() -> None:
    high = parse_verdict('{"should_respond": true, "delay_seconds": 9999}', max_delay=600)
    low = parse_verdict('{"should_respond": true, "delay_seconds": -5}', max_delay=600)
    assert high.delay_seconds == 600
    assert low.delay_seconds == 0


@pytest.mark.parametrize(
    "text",
    [
        "I think you should answer.",
        '{"reason": "missing the decision"}',
        '{"should_respond": "maybe"}',
        '{"should_respond": true, "confidence": 3}',
        '{"should_respond": true, "delay_seconds": "soon"}',
        "",
    ],
)
def test_invalid_answers_raise(text: str) -> None:
    with pytest.raises(InvalidVerdict):
        parse_verdict(text, max_delay=600)


@pytest.mark.parametrize(
    ("named", "reaction"),
    [
        ('"pray"', "pray"),
        ('":+1:"', "+1"),
        ('" Wave "', "wave"),
        ('"thumbsup::skin-tone-3"', "thumbsup::skin-tone-3"),
        ('"<!channel>"', None),
        ('"two words"', None),
        ('""', None),
        ("null", None),
        ("3", None),
        ('["pray"]', None),
    ],
)
def test_a_reaction_is_an_emoji_name_or_none_and_never_spoils_the_verdict(
    named: str, reaction: str | None
) -> None:
    verdict = parse_verdict(
        f'{{"should_respond": false, "reason": "closing", "reaction": {named}}}', max_delay=600
    )
    assert verdict.reaction == reaction and not verdict.should_respond
