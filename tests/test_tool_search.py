"""Deferred tools stay out of the prompt until tool_search loads them, mid-phase."""

from __future__ import annotations

from activities.tools.search import bm25
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical

DEFERRED = {"extends": "creator", "tools": {"deferred": ["chunk_document"], "search_results": 1}}


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def test_bm25_ranks_by_words():
    docs = {"chunk_document": "Split a document into structure-aware chunks",
            "extract_document_text": "Extract the text of a document",
            "web_search": "Search the web for pages"}
    assert bm25("split the document into chunks", docs)[0][1] == "chunk_document"
    assert bm25("search pages on the web", docs)[0][1] == "web_search"
    assert bm25("zebra", docs) == []


async def test_tool_search_loads_a_deferred_tool(client, task_queue, start_job, model_server,
                                                 s3):
    script = bootstrap() + [
        step(call("chunk_document", path="documents/note.md")),  # not loaded yet
        step(call("tool_search", query="split a document into chunks")),
        step(call("chunk_document", path="documents/note.md")),
    ] + tactical(5) + finish()
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, config=DEFERRED, instructions="x",
                                 documents=[{"name": "note.md", "text": "# A\n\nAlpha.\n"}])
        assert (await handle.result()).status == "completed"
    reqs = model_server.requests(handle.id)
    n = len(bootstrap())
    assert "chunk_document" not in tool_names(reqs[n]) and "tool_search" in tool_names(reqs[n])
    assert "chunk_document" not in tool_names(reqs[n + 1])
    assert "chunk_document" in tool_names(reqs[n + 2])  # loaded for the rest of the phase
    assert "chunk_document" not in tool_names(reqs[-1])  # but not in later phases
    texts = [m["content"] for r in reqs for m in r["messages"] if m["role"] == "tool"]
    assert any("[tool_not_loaded]" in t and "tool_search" in t for t in texts)
    assert any(t.startswith("Loaded these tools") and "chunk_document" in t for t in texts)
    assert await s3.get("switchback", f"{handle.id}/chunks/manifest.json") is not None
