"""Slack request signing (v0 HMAC-SHA256 over the raw body, timestamp within 5 minutes)."""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import time
from collections.abc import Mapping

from slack_sdk.signature import Clock, SignatureVerifier

# ASCII digits (str.isdigit also takes "²" and "٣", which int() then refuses or reads), and
# few enough of them for int(): a 5,000-digit timestamp is not one.
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
MAX_AGE_SECONDS = 300  # slack-sdk's window, for bodies it cannot check (below)


class _FixedClock(Clock):
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


@functools.lru_cache(maxsize=4)
def _verifier(signing_secret: str) -> SignatureVerifier:
    return SignatureVerifier(signing_secret)  # slack-sdk's clock: the current time


def verify_slack_signature(
    body: bytes,
    headers: Mapping[str, str],
    *,
    signing_secret: str,
    now: float | None = None,
) -> bool:
    """True when the request carries a valid, fresh Slack signature for this body. Any
    header value is answered, never raised on."""
    timestamp = headers.get("x-slack-request-timestamp")
    signature = headers.get("x-slack-signature")
    if not timestamp or not signature or _TIMESTAMP.fullmatch(timestamp) is None:
        return False
    if not signature.isascii():  # hmac.compare_digest refuses to compare other strings
        return False
    if now is None:
        verifier = _verifier(signing_secret)
    else:
        verifier = SignatureVerifier(signing_secret, clock=_FixedClock(now))
    try:
        return verifier.is_valid(body, timestamp, signature)
    except UnicodeDecodeError:
        # slack-sdk signs text; Slack sends UTF-8. A body that is not UTF-8 is checked over its
        # bytes here, so a signed one is told apart (400, not JSON) from a forged one (401).
        return _valid_bytes(body, timestamp, signature, secret=signing_secret, now=now)


def _valid_bytes(
    body: bytes, timestamp: str, signature: str, *, secret: str, now: float | None
) -> bool:
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > MAX_AGE_SECONDS:
        return False
    base = b"v0:" + timestamp.encode() + b":" + body
    expected = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature)
