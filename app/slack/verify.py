"""Slack request signing (v0 HMAC-SHA256 over the raw body, timestamp within 5 minutes)."""

from __future__ import annotations

import functools
from collections.abc import Mapping

from slack_sdk.signature import Clock, SignatureVerifier


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
    """True when the request carries a valid, fresh Slack signature for this body."""
    timestamp = headers.get("x-slack-request-timestamp")
    signature = headers.get("x-slack-signature")
    if not timestamp or not signature or not timestamp.isdigit():
        return False
    if now is None:
        verifier = _verifier(signing_secret)
    else:
        verifier = SignatureVerifier(signing_secret, clock=_FixedClock(now))
    try:
        return verifier.is_valid(body, timestamp, signature)
    except UnicodeDecodeError:  # slack-sdk decodes the body; Slack only sends UTF-8
        return False
