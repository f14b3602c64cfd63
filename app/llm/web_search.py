"""Web search through LiteLLM's search API (`litellm.asearch`): one provider (Tavily, Brave,
SearXNG, Exa, …) chosen by WEB_SEARCH_PROVIDER, with its key and base URL. What comes back is
titles, URLs and snippets; a provider that fails raises SearchError."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from app.llm.client import litellm_module

SECONDS = 10.0  # one search


class SearchError(Exception):
    """The provider did not answer with results (down, an error status, too slow)."""


@dataclass(frozen=True)
class Found:
    title: str
    url: str
    snippet: str


class WebSearch:
    def __init__(
        self,
        *,
        provider: str,
        api_key: str | None = None,
        api_base: str | None = None,
        seconds: float = SECONDS,
    ) -> None:
        self._provider = provider
        self._api_key = api_key
        self._api_base = api_base
        self._seconds = seconds

    async def search(self, query: str, *, limit: int) -> list[Found]:
        """At most `limit` results, cut here where a provider returns more than it was asked."""
        litellm = await litellm_module()
        try:
            # LiteLLM's own timeout does not reach every provider's request (SearXNG's):
            # the wait is bounded here too.
            async with asyncio.timeout(self._seconds):
                answer = await litellm.asearch(
                    query=query,
                    search_provider=self._provider,
                    max_results=limit,
                    api_key=self._api_key,
                    api_base=self._api_base,
                    timeout=self._seconds,
                )
        except TimeoutError as error:
            raise SearchError("the search provider did not answer in time") from error
        except Exception as error:  # LiteLLM maps every provider failure to its own types
            raise SearchError(_why(error)) from error
        found = [
            Found(
                title=str(getattr(r, "title", "") or ""),
                url=str(getattr(r, "url", "") or ""),
                snippet=str(getattr(r, "snippet", "") or ""),
            )
            for r in (getattr(answer, "results", None) or [])
        ]
        return [f for f in found if f.url][:limit]


def _why(error: Exception) -> str:
    """What went wrong, without the provider's full message (it may echo the request)."""
    name = type(error).__name__
    status = getattr(error, "status_code", None)
    if "Timeout" in name:
        return "the search provider did not answer in time"
    if "Connection" in name:
        return "the search provider could not be reached"
    if isinstance(status, int):
        return f"the search provider answered {status}"
    return f"the search failed ({name})"
