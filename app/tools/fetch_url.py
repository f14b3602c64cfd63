"""`fetch_url(url)`: the readable text of a web page someone shared or a search found, marked
as data from the web. Only a URL given in this reply is requested (app.tools.given: a person's
message, a tool's result), never one the model put together. Fetching is app.tools.web_fetch's
(which addresses, how much, how long), reading app.tools.web_text's; nothing fetched is
stored."""

from __future__ import annotations

import logging
import re
from typing import Any, ClassVar

from app.llm.prompts import render
from app.tools.base import Asker, ToolResult, failed
from app.tools.given import slack_decoded, url_key
from app.tools.kit import Kit
from app.tools.web_fetch import FetchFailed, PageFetcher
from app.tools.web_guard import policy
from app.tools.web_text import NotText, readable_text

logger = logging.getLogger(__name__)

MAX_URL = 2000
# A `<` or `>` that starts a run of three: spaced, so no `<<<` or `>>>` is left in a page.
FENCE_LIKE = re.compile(r"([<>])(?=\1\1)")
NOT_GIVEN = (
    "refused: this URL appears nowhere in what I was given in this conversation (a person's "
    "message, or a tool's result such as a search or a page), so it was not requested. Only "
    "links given as they were written are read, never one put together or changed."
)


def defused(text: str) -> str:
    """Text from the web with the markers that fence it off made harmless inside it."""
    return FENCE_LIKE.sub(r"\1 ", text)


class FetchUrlTool:
    name: ClassVar[str] = "fetch_url"
    description: ClassVar[str] = (
        "Read a web page (http or https): its main text, a PDF's text, or a plain text file. "
        "Use it for a link someone shared or one a web search found: only a URL that "
        "appears in the conversation or in a tool's result, exactly as written there, is read."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The page's full http(s) URL."},
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def __init__(self, kit: Kit, **options: Any) -> None:
        """`options` (resolve, allow, seconds, max_bytes: app.tools.web_fetch) are the
        tests'; the addresses allowed come from FETCH_PRIVATE_ADDRESSES."""
        allow = policy(allow_private=kit.settings.FETCH_PRIVATE_ADDRESSES)
        self._fetcher = PageFetcher(**{"allow": allow, **options})

    def progress(self, arguments: dict[str, Any]) -> str:
        return f"Reading {str(arguments.get('url', ''))[:200]}"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        url = arguments.get("url")
        if not isinstance(url, str) or not url.strip():
            return failed("fetch_url needs a url")
        # As Slack shows a link: <https://…|label>, with & written &amp;.
        url = slack_decoded(url.strip().strip("<>").partition("|")[0]).strip()
        if len(url) > MAX_URL:
            return failed("the URL is too long")
        if url_key(url) is None:
            return failed("fetch_url reads only an http or https URL with a host")
        if not asker.given.holds(url):
            logger.info("fetch_url refused a URL not given in claim %d", asker.claim_id)
            return failed(NOT_GIVEN)
        try:
            page = await self._fetcher.fetch(url)
            text = await readable_text(page)
        except FetchFailed as error:
            logger.info("fetch_url %s: %s", url[:200], error)
            return failed(f"could not read {url[:200]}: {error}")
        except NotText as error:
            return failed(f"{url[:200]} is not something I can read as text: {error}")
        shown = render(
            "tools/web_page.j2",
            url=defused(page.url),
            truncated=page.truncated,
            read_bytes=len(page.data),
            text=defused(text),
        )
        return ToolResult(text=shown, sources=(page.url,)).bounded()
