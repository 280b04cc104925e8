"""Deferred tools stay out of the prompt until tool_search loads them, mid-phase."""

from __future__ import annotations

from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools.registry import ToolSearchArgs
from switchback.activities.tools.search import bm25, tool_search
from switchback.workflows.contract import ToolLimits, WorkspaceRef
from switchback.workflows.contract.requests import SEARCH_RESULTS
from tests.conftest import running_worker
from tests.scripts import bootstrap, call, finish, step, tactical

DEFERRED = {"extends": "creator", "tools": {"deferred": ["chunk_document"]}}


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def test_bm25_ranks_by_words():
    docs = {"chunk_document": "Split a document into structure-aware chunks",
            "extract_document_text": "Extract the text of a document",
            "web_search": "Search the web for pages"}
    assert bm25("split the document into chunks", docs)[0][1] == "chunk_document"
    assert bm25("search pages on the web", docs)[0][1] == "web_search"
    assert bm25("zebra", docs) == []


async def test_a_search_loads_the_best_search_results_matches(s3):
    """More deferred tools match than one search loads: the best SEARCH_RESULTS, best first."""
    docs = {f"tool_{i}": "read a document " + "document " * i for i in range(SEARCH_RESULTS + 2)}
    limits = ToolLimits(read_max_chars=1000, max_file_bytes=1000, min_todos=1, max_todos=20,
                        deferred=list(docs))
    files = WorkspaceFiles(s3, WorkspaceRef(bucket="switchback", job_id="search"))
    found = await tool_search(files, ToolSearchArgs(query="document"), limits, docs)
    assert found.tools_added == [name for _, name in bm25("document", docs)][:SEARCH_RESULTS]
    assert len(found.tools_added) == SEARCH_RESULTS == 3


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
