"""Slack request signing (v0 HMAC-SHA256 over the raw body, timestamp within 5 minutes)."""

from __future__ import annotations

import time
from collections.abc import Mapping

from slack_sdk.signature import Clock, SignatureVerifier


class _FixedClock(Clock):
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


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
    clock = _FixedClock(time.time() if now is None else now)
    return SignatureVerifier(signing_secret, clock=clock).is_valid(body, timestamp, signature)
