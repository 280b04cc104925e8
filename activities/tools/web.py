"""`web_search(query, max_results=5)`: background from the web, when a provider is configured.

Asks `activities.web_search.configured_provider()`: none -> `web_search_unavailable`, a
provider refusal -> `web_search_failed` (the model carries on without the web); network
errors and 5xx raise and are retried. Off unless SWITCHBACK_WEB_SEARCH_URL is set. A tool of
the public API, registered as one entry point (pyproject.toml).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from switchback import ToolContext, ToolError, ToolResult, tool
from switchback.activities.web_search import SearchRejected, configured_provider


class WebSearchArgs(BaseModel):
    query: str = Field(min_length=2, max_length=400, description="Search terms")
    max_results: int = Field(5, ge=1, le=10, description="How many results, 1-10")


@tool
async def web_search(ctx: ToolContext, a: WebSearchArgs) -> ToolResult:
    """Search the web for background (when configured). Answers with titles, URLs and
    snippets; cite the documents, not search results."""
    provider = configured_provider()
    if provider is None:
        raise ToolError("web_search_unavailable", "web search is not configured on this "
                        "worker; work from the documents in the workspace")
    try:
        results = await provider.search(a.query, a.max_results)
    except SearchRejected as e:
        raise ToolError("web_search_failed", str(e)) from e
    if not results:
        return ToolResult(f"No results for '{a.query}'.")
    lines = [f"{len(results)} results for '{a.query}':"]
    for n, r in enumerate(results, 1):
        lines += [f"{n}. {r.title or '(no title)'}", f"   {r.url}"]
        if r.snippet:
            lines.append(f"   {r.snippet[:300]}")
    return ToolResult("\n".join(lines))
