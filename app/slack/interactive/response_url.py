"""A message after the answer: posted to a slash command's `response_url` (ephemeral, seen
only by the person who ran the command), through slack-sdk's webhook client."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

SLACK_HOOK_HOSTS = frozenset({"hooks.slack.com", "hooks.slack-gov.com"})
TIMEOUT_SECONDS = 10


def allowed(url: str, *, api_url: str) -> bool:
    """Only Slack's own hooks (or the host SLACK_API_URL names, where a stand-in serves both):
    a response_url is never a way to make tomo call anywhere else."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname in SLACK_HOOK_HOSTS:
        return True
    api = urlsplit(api_url)
    return bool(parts.hostname) and (parts.scheme, parts.hostname) == (api.scheme, api.hostname)


async def respond(url: str, text: str, *, api_url: str) -> bool:
    """Post `text` for the person who ran the command; False (logged) when it did not go."""
    if not allowed(url, api_url=api_url):
        logger.warning("not answering a response_url outside Slack: %s", urlsplit(url).netloc)
        return False
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    client = AsyncWebhookClient(url, timeout=TIMEOUT_SECONDS)
    try:
        response = await client.send(text=text, response_type="ephemeral", replace_original=False)
    except Exception as error:  # aiohttp's errors, timeouts: the answer is lost, nothing else
        logger.warning("answering the response_url failed: %s", error)
        return False
    if response.status_code != 200:
        logger.warning("the response_url answered %s: %s", response.status_code, response.body)
        return False
    return True
