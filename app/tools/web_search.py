"""`web_search(query, limit=5)`: titles, links and snippets from the web search provider the
operator chose (WEB_SEARCH_PROVIDER, through app.llm.web_search), marked as data from the web.
Offered only when a provider is set (app.tools.registry)."""

from __future__ import annotations

from typing import Any, ClassVar

from app.llm.prompts import render
from app.llm.web_search import SearchError, WebSearch
from app.tools.base import Asker, ToolResult, failed
from app.tools.fetch_url import defused
from app.tools.kit import Kit

MAX_LIMIT = 10
MAX_QUERY = 400
SNIPPET_CHARS = 400


class WebSearchTool:
    name: ClassVar[str] = "web_search"
    description: ClassVar[str] = (
        "Search the web: titles, links and short snippets of the best matches. Read a result "
        "with fetch_url when the snippet is not enough."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to search for."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": 5,
                "description": "How many results, at most.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def __init__(self, kit: Kit, *, seconds: float | None = None) -> None:
        settings = kit.settings
        key = settings.WEB_SEARCH_API_KEY
        self._search = WebSearch(
            provider=settings.WEB_SEARCH_PROVIDER or "",
            api_key=key.get_secret_value() if key is not None else None,
            api_base=settings.WEB_SEARCH_API_BASE,
            **({"seconds": seconds} if seconds is not None else {}),
        )

    def progress(self, arguments: dict[str, Any]) -> str:
        return f"Searching the web for {str(arguments.get('query', ''))[:200]}"

    async def run(self, arguments: dict[str, Any], *, asker: Asker) -> ToolResult:
        query = " ".join(str(arguments.get("query") or "").split())
        if not query:
            return failed("web_search needs a query")
        if len(query) > MAX_QUERY:
            return failed(f"the query is at most {MAX_QUERY} characters")
        limit = arguments.get("limit", 5)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            return failed(f"limit is a whole number from 1 to {MAX_LIMIT}")
        try:
            found = await self._search.search(query, limit=limit)
        except SearchError as error:
            return failed(f"the web search did not work: {error}")
        results = [
            {
                "title": defused(" ".join(f.title.split()))[:200],
                "url": defused(f.url)[:500],
                "snippet": defused(" ".join(f.snippet.split()))[:SNIPPET_CHARS],
            }
            for f in found
        ]
        text = render("tools/web_results.j2", query=defused(query), results=results)
        return ToolResult(text=text, sources=tuple(f.url for f in found)).bounded()
