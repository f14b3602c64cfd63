"""What a failed Slack Web API call means: our one error, and whether its outcome is uncertain.

slack-sdk reports a failure in many shapes. An answer it could read arrives as SlackApiError
holding an AsyncSlackResponse (`status_code`, `data`); a body that is not JSON under a JSON
content type arrives as SlackApiError holding aiohttp's own response (`status`, no data); a
`text/plain` body makes the response's validation fail with AttributeError; timeouts,
resets and refused connections arrive as aiohttp's or asyncio's exceptions.

A call is *uncertain* when Slack may have carried it out although we never learnt so: a 5xx,
Slack's own `internal_error`/`fatal_error`, an unreadable answer, a timeout, a connection cut
after the request was sent. Retrying such a call blindly may do it twice (a post posted
twice); the caller has to look first. A call Slack refused (an `ok: false` with an error code,
a 4xx, a 429) or that never left (no connection) is certain: nothing happened.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError

# Slack's error codes for "it broke on our side, part of it may have happened".
UNCERTAIN_CODES = frozenset({"internal_error", "fatal_error", "service_unavailable"})


# Slack's answers that mean the token itself is refused (its common errors): no quick retry
# fixes them; an operator must change SLACK_BOT_TOKEN or reinstall the app.
AUTH_ERRORS = frozenset(
    {
        "invalid_auth",
        "not_authed",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "org_login_required",
        "ekm_access_denied",
        "not_allowed_token_type",
        "team_access_not_granted",
        "access_denied",
    }
)


class SlackError(Exception):
    """A Slack Web API call failed (after slack-sdk's retries, where the call allows them)."""

    def __init__(
        self, method: str, error: str, *, rate_limited: bool = False, uncertain: bool = False
    ) -> None:
        super().__init__(f"{method}: {error}{' (outcome uncertain)' if uncertain else ''}")
        self.method = method
        self.error = error
        self.rate_limited = rate_limited
        self.uncertain = uncertain

    @property
    def token_refused(self) -> bool:
        """Slack refused the bot token itself (revoked, the app uninstalled): nothing was done,
        and nothing will be until the token works again."""
        return self.error in AUTH_ERRORS


def error_from_exception(method: str, error: BaseException) -> SlackError:
    """Our SlackError for whatever slack-sdk (or aiohttp under it) raised."""
    import aiohttp

    if isinstance(error, SlackApiError):
        return _from_answer(method, error.response)
    if isinstance(error, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        # No connection was made: the request never reached Slack.
        return SlackError(method, f"cannot connect: {type(error).__name__}: {error}")
    if isinstance(error, TimeoutError):
        return SlackError(method, f"timed out ({type(error).__name__})", uncertain=True)
    if isinstance(error, SlackClientError):
        return SlackError(method, f"{type(error).__name__}: {error}")  # refused before sending
    # A connection cut after sending, a broken payload, an answer slack-sdk could not read.
    return SlackError(method, f"{type(error).__name__}: {error}", uncertain=True)


def _from_answer(method: str, response: Any) -> SlackError:
    status = getattr(response, "status_code", None)
    if status is None:
        # aiohttp's own response: slack-sdk could not decode the body it announced as JSON.
        status = getattr(response, "status", None)
        data: Any = None
    else:
        data = getattr(response, "data", None)
    code = data.get("error") if isinstance(data, dict) else None
    rate_limited = status == 429 or code == "ratelimited"
    if isinstance(status, int) and 400 <= status < 500:
        return SlackError(method, str(code or f"HTTP {status}"), rate_limited=rate_limited)
    if status == 200 and isinstance(code, str) and code and code not in UNCERTAIN_CODES:
        return SlackError(method, code, rate_limited=rate_limited)
    what = code if isinstance(code, str) and code else "unreadable answer"
    return SlackError(method, f"HTTP {status}: {what}", uncertain=True)


def unreadable(method: str, data: object) -> SlackError:
    """A 200 that slack-sdk accepted but whose body is not the JSON object we need."""
    return SlackError(method, f"unreadable answer ({type(data).__name__})", uncertain=True)
