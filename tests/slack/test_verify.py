import pytest

from app.slack.verify import MAX_AGE_SECONDS, verify_slack_signature
from tests.signing import sign

# Slack's published example (api.slack.com/authentication/verifying-requests-from-slack).
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
SLACK_TIMESTAMP = "1531420618"
SLACK_BODY = (
    b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow"
    b"&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner"
    b"&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands"
    b"%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
    b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
SLACK_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


def headers(timestamp: str, signature: str) -> dict[str, str]:
    return {"x-slack-request-timestamp": timestamp, "x-slack-signature": signature}


def test_slack_published_vector_is_valid() -> None:
    assert verify_slack_signature(
        SLACK_BODY,
        headers(SLACK_TIMESTAMP, SLACK_SIGNATURE),
        signing_secret=SLACK_SECRET,
        now=float(SLACK_TIMESTAMP) + 10,
    )


def test_our_signing_helper_matches_slacks_vector() -> None:
    signed = sign(SLACK_BODY, secret=SLACK_SECRET, timestamp=int(SLACK_TIMESTAMP))
    assert signed["X-Slack-Signature"] == SLACK_SIGNATURE


def test_stale_timestamp_is_rejected() -> None:
    assert not verify_slack_signature(
        SLACK_BODY,
        headers(SLACK_TIMESTAMP, SLACK_SIGNATURE),
        signing_secret=SLACK_SECRET,
        now=float(SLACK_TIMESTAMP) + 301,
    )


def test_tampered_body_is_rejected() -> None:
    assert not verify_slack_signature(
        SLACK_BODY.replace(b"foobar", b"foobaz"),
        headers(SLACK_TIMESTAMP, SLACK_SIGNATURE),
        signing_secret=SLACK_SECRET,
        now=float(SLACK_TIMESTAMP),
    )


def test_wrong_secret_and_garbage_headers_are_rejected() -> None:
    now = float(SLACK_TIMESTAMP)
    good = headers(SLACK_TIMESTAMP, SLACK_SIGNATURE)
    assert not verify_slack_signature(SLACK_BODY, good, signing_secret="other", now=now)
    assert not verify_slack_signature(SLACK_BODY, {}, signing_secret=SLACK_SECRET, now=now)
    assert not verify_slack_signature(
        SLACK_BODY, headers("not-a-number", SLACK_SIGNATURE), signing_secret=SLACK_SECRET, now=now
    )


def test_a_signed_body_that_is_not_utf8_is_verified_over_its_bytes() -> None:
    # Slack sends UTF-8; a signed body that is not must still count as signed, so that the
    # endpoint answers 400 (not JSON) rather than 401 (not from Slack).
    body = b"\xff\xfe not utf-8"
    signed = sign(body, secret=SLACK_SECRET, timestamp=int(SLACK_TIMESTAMP))
    lowered = {k.lower(): v for k, v in signed.items()}
    now = float(SLACK_TIMESTAMP)
    assert verify_slack_signature(body, lowered, signing_secret=SLACK_SECRET, now=now)
    assert not verify_slack_signature(body, lowered, signing_secret="other", now=now)
    assert not verify_slack_signature(body + b"x", lowered, signing_secret=SLACK_SECRET, now=now)
    assert not verify_slack_signature(
        body, lowered, signing_secret=SLACK_SECRET, now=now + MAX_AGE_SECONDS + 1
    )


@pytest.mark.parametrize(
    ("timestamp", "signature"),
    [
        ("9" * 5000, SLACK_SIGNATURE),  # int() refuses more than 4,300 digits
        ("\xb2", SLACK_SIGNATURE),  # "²": a digit to str.isdigit, not to int()
        ("1531420618\xb2", SLACK_SIGNATURE),
        ("\u0661\u0665\u0663\u0661\u0664\u0662\u0660\u0666\u0661\u0668", SLACK_SIGNATURE),
        (" 1531420618", SLACK_SIGNATURE),
        ("-1531420618", SLACK_SIGNATURE),
        (SLACK_TIMESTAMP, SLACK_SIGNATURE[:-1] + "\xe9"),  # compare_digest refuses non-ASCII
        (SLACK_TIMESTAMP, "v0=\u00ff" * 30),
        (SLACK_TIMESTAMP, ""),
    ],
)
def test_odd_headers_are_refused_never_raised_on(timestamp: str, signature: str) -> None:
    assert not verify_slack_signature(
        SLACK_BODY,
        headers(timestamp, signature),
        signing_secret=SLACK_SECRET,
        now=float(SLACK_TIMESTAMP),
    )
