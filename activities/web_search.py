"""Web search behind a provider interface, for the `web_search` tool.

Contract:
- `SearchProvider` is the seam: anything with `async search(query, max_results)` returning
  `SearchResult`s. `HttpSearchProvider(url, api_key)` GETs `url?q=<query>&n=<max>` with
  `Authorization: Bearer <key>` (no header without a key) and expects
  `{"results": [{"title", "url", "snippet"}]}`.
- `configured_provider()` is the one set with `set_provider`, else the HTTP provider from
  the environment (`SWITCHBACK_WEB_SEARCH_URL`, `SWITCHBACK_WEB_SEARCH_KEY`), else None:
  search is off unless configured.
- Failures: network errors, timeouts and HTTP 5xx raise httpx errors, HTTP 429 raises an
  `ApplicationError` that honours Retry-After; all are retried by Temporal. Other 4xx and
  answers that are not the expected JSON raise `SearchRejected` (the tool reports it to
  the model, which carries on without the web).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

import httpx
from temporalio.exceptions import ApplicationError

URL_ENV, KEY_ENV = "SWITCHBACK_WEB_SEARCH_URL", "SWITCHBACK_WEB_SEARCH_KEY"


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


class SearchRejected(Exception):
    """The provider answered, but not with results; retrying will not help."""


class SearchProvider(Protocol):
    async def search(self, query: str, max_results: int) -> list[SearchResult]: ...


class HttpSearchProvider:
    def __init__(self, url: str, api_key: str = "", timeout: float = 15.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url, self.api_key, self.timeout, self.transport = url, api_key, timeout, transport

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        async with httpx.AsyncClient(timeout=self.timeout, transport=self.transport) as client:
            r = await client.get(self.url, params={"q": query, "n": max_results},
                                 headers=headers)
        if r.status_code == 429:
            delay = _retry_after(r.headers.get("Retry-After"))
            raise ApplicationError("web search provider is rate limiting (HTTP 429)",
                                   next_retry_delay=delay)
        if r.status_code >= 500:
            r.raise_for_status()
        if r.status_code >= 400:
            raise SearchRejected(f"the search provider answered HTTP {r.status_code}: "
                                 f"{r.text[:200]}")
        return parse_results(r, max_results)


def parse_results(r: httpx.Response, max_results: int) -> list[SearchResult]:
    try:
        items = r.json()["results"]
        if not isinstance(items, list):
            raise TypeError("'results' is not a list")
        out = [SearchResult(title=" ".join(str(i.get("title") or "").split()),
                            url=str(i["url"]).strip(),
                            snippet=" ".join(str(i.get("snippet") or "").split()))
               for i in items]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise SearchRejected("the search provider's answer is not "
                             f'{{"results": [{{"title", "url", "snippet"}}]}} ({e})') from e
    return [x for x in out if x.url][:max_results]


def _retry_after(value: str | None) -> timedelta | None:
    try:
        return timedelta(seconds=min(300.0, max(0.0, float(value)))) if value else None
    except ValueError:
        return None  # an HTTP date: leave the delay to the retry policy


def provider_from_env(env: Mapping[str, str] | None = None) -> SearchProvider | None:
    env = os.environ if env is None else env
    url = env.get(URL_ENV, "").strip()
    return HttpSearchProvider(url, env.get(KEY_ENV, "").strip()) if url else None


_provider: SearchProvider | None = None


def set_provider(provider: SearchProvider | None) -> None:
    """Use `provider` for every search in this process (None: back to the environment)."""
    global _provider
    _provider = provider


def configured_provider() -> SearchProvider | None:
    return _provider if _provider is not None else provider_from_env()
