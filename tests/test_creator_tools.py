"""Creator tools against a real S3 (SeaweedFS): candidates, citations, requirements and
web search (against a local HTTP server)."""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx
import jsonschema
import pytest
from temporalio.exceptions import ApplicationError

from switchback import Tool, ToolError
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools import web
from switchback.activities.tools.catalog import SOURCES
from switchback.activities.tools.packages import handler
from switchback.activities.web_search import KEY_ENV, URL_ENV, HttpSearchProvider, set_provider
from switchback.workflows.contract import ToolLimits, WorkspaceRef
from switchback_documents import creator_tools as ct
from switchback_documents.document_tools import DocumentArgs, chunk_document

LIMITS = ToolLimits(read_max_chars=20000, max_file_bytes=5_000_000, min_todos=5, max_todos=20)
SAMPLES = Path(__file__).resolve().parents[1] / "configs" / "creator" / "documents"
SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "configs" / ct.SCHEMA).read_text(
    encoding="utf-8"))

CHUNK = ("## Aufbewahrungsfristen\n\nBücher und Aufzeichnungen sind zehn Jahre\n"
         "aufzubewahren.   Buchungsbelege müssen acht Jahre lang aufbewahrt werden.\n\n"
         "Personal data shall be erased without undue delay.")


@pytest.fixture
def files(s3) -> WorkspaceFiles:
    return WorkspaceFiles(s3, WorkspaceRef(bucket="switchback",
                                           job_id=f"creator-{uuid.uuid4().hex[:10]}"))


async def put_chunks(files: WorkspaceFiles, chunks: dict[str, str]) -> None:
    entries = []
    for n, (cid, text) in enumerate(chunks.items()):
        await files.write_text(f"chunks/{cid}.md", text, LIMITS.max_file_bytes)
        entries.append({"id": cid, "source": "documents/policy.md", "page": None,
                        "heading_path": ["Policy"], "start": 1000 * n, "end": 1000 * n + len(text),
                        "chars": len(text)})
    await files.write_text("chunks/manifest.json", json.dumps({"chunks": entries}),
                           LIMITS.max_file_bytes)


async def read_json(files: WorkspaceFiles, path: str) -> dict:
    return json.loads(await files.read_text(path))


async def fails(code: str, call) -> str:
    with pytest.raises(ToolError) as info:
        await call
    assert info.value.code == code, str(info.value)
    return str(info.value)


async def run(tool: Tool, files: WorkspaceFiles, args, limits: ToolLimits = LIMITS):
    """The tool as run_tool runs it: through the package adapter, with a ToolContext."""
    return await handler(tool)(files, args, limits)


def test_tools_are_described_and_registered() -> None:
    tools = [ct.identify_requirement_candidates, ct.cite_document, ct.write_requirement,
             web.web_search]
    for t in tools:  # through the entry points of the document app, and switchback's own
        assert SOURCES[t.name] == ("built-in" if t is web.web_search
                                   else "package switchback-documents")
        schema = t.args.model_json_schema()
        assert schema["type"] == "object" and t.description
        assert all(p.get("description") for p in schema["properties"].values())


async def test_candidates_file_written_from_real_chunks(files: WorkspaceFiles) -> None:
    for name in ("gobd_retention.md", "gdpr_erasure.txt"):
        await files.write_bytes(f"documents/{name}", (SAMPLES / name).read_bytes(),
                                LIMITS.max_file_bytes)
        await run(chunk_document, files, DocumentArgs(path=f"documents/{name}"))
    result = await run(ct.identify_requirement_candidates, files, ct.IdentifyCandidatesArgs())
    assert result.changed == [ct.CANDIDATES]
    doc = await read_json(files, ct.CANDIDATES)
    cands = doc["candidates"]
    assert len(cands) >= 30 and doc["by_regime"]["GoBD"] >= 15 and doc["by_regime"]["GDPR"] >= 10
    assert result.text.startswith(f"Found {len(cands)} candidates in ")
    assert f"GoBD {doc['by_regime']['GoBD']}" in result.text and "GDPR" in result.text
    assert len(result.text) < 300  # counts, never the sentences
    for c in cands:
        chunk = await files.read_text(f"chunks/{c['chunk_id']}.md")
        assert chunk[c["start"]:c["end"]] == c["sentence"]
        assert c["source"].startswith("documents/") and c["id"].startswith("CAND-")
    regimes = {(c["source"], c["regime"]) for c in cands}
    assert regimes == {("documents/gobd_retention.md", "GoBD"),
                       ("documents/gdpr_erasure.txt", "GDPR")}


async def test_candidates_need_a_manifest(files: WorkspaceFiles) -> None:
    await fails("no_chunks", run(ct.identify_requirement_candidates,
        files, ct.IdentifyCandidatesArgs()))


async def test_candidates_skip_missing_chunk_files(files: WorkspaceFiles) -> None:
    await put_chunks(files, {"chunk_001": CHUNK})
    manifest = await read_json(files, "chunks/manifest.json")
    manifest["chunks"].append({**manifest["chunks"][0], "id": "chunk_002"})
    await files.write_text("chunks/manifest.json", json.dumps(manifest), LIMITS.max_file_bytes)
    result = await run(ct.identify_requirement_candidates, files, ct.IdentifyCandidatesArgs())
    assert "Found 3 candidates in 1 of 1 chunks (GoBD 2, GDPR 1)" in result.text
    assert "Missing chunk files (skipped): chunk_002" in result.text


async def test_citation_with_a_false_quote_is_refused(files: WorkspaceFiles) -> None:
    await put_chunks(files, {"chunk_001": CHUNK})
    msg = await fails("quote_not_found", run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="chunk_001", quote="Bücher und Aufzeichnungen sind fünf Jahre aufzubewahren."),
        LIMITS))
    assert "chunk 'chunk_001'" in msg and "first 31 of 56 characters match" in msg
    assert "'fünf Jahre aufzubewahren.'" in msg
    msg = await fails("quote_not_found", run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="chunk_001", quote="personal data shall be erased")))
    assert "capitalisation" in msg
    msg = await fails("unknown_chunk", run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="chunk_099", quote="Buchungsbelege müssen acht Jahre")))
    assert "chunk_099" in msg and "chunk_001 .. chunk_001" in msg
    await fails("unknown_chunk", run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="../secrets", quote="Buchungsbelege müssen acht Jahre")))
    assert await files.read_optional(ct.CITATIONS) is None


async def test_true_quote_is_recorded_with_exact_offsets(files: WorkspaceFiles) -> None:
    await put_chunks(files, {"chunk_001": "Intro.", "chunk_002": CHUNK})
    quote = "Bücher und Aufzeichnungen sind zehn Jahre aufzubewahren. Buchungsbelege"
    result = await run(ct.cite_document, files,
                       ct.CiteDocumentArgs(chunk_id="chunk_002", quote=quote))
    start = CHUNK.index("Bücher")
    end = CHUNK.index("Buchungsbelege") + len("Buchungsbelege")
    assert result.text == (f"Recorded CIT-001: chunk_002 characters {start}-{end} "
                           "(documents/policy.md).")
    assert result.changed == [ct.CITATIONS]
    [rec] = (await read_json(files, ct.CITATIONS))["citations"]
    assert rec == {"id": "CIT-001", "chunk_id": "chunk_002", "quote": CHUNK[start:end],
                   "start": start, "end": end, "source": "documents/policy.md", "page": None,
                   "heading_path": ["Policy"], "source_start": 1000 + start,
                   "source_end": 1000 + end}
    assert " ".join(rec["quote"].split()) == quote
    # the same passage again (different whitespace, quote marks, the path form): same id
    again = await run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="chunks/chunk_002.md", quote=f"„{quote.replace(' ', chr(10), 2)}“"))
    assert again.text.startswith("Already recorded as CIT-001") and again.changed == []
    other = await run(ct.cite_document, files, ct.CiteDocumentArgs(
        chunk_id="chunk_002", quote="Personal data shall be erased without undue delay."),
        LIMITS)
    assert other.text.startswith("Recorded CIT-002: chunk_002")
    assert len((await read_json(files, ct.CITATIONS))["citations"]) == 2


async def cite(files: WorkspaceFiles, quote: str) -> str:
    result = await run(ct.cite_document, files, ct.CiteDocumentArgs(chunk_id="chunk_001",
                                                               quote=quote))
    return result.text.split()[1].rstrip(":")


def req_args(**kw) -> ct.WriteRequirementArgs:
    base = {"statement": "Books and records must be retained for ten years.",
            "regime": "GoBD", "citation_ids": ["CIT-001"],
            "rationale": "GoBD retention period for books."}
    return ct.WriteRequirementArgs(**{**base, **kw})


async def test_write_requirement_builds_a_valid_output(files: WorkspaceFiles) -> None:
    await put_chunks(files, {"chunk_001": CHUNK})
    books = await cite(files, "Bücher und Aufzeichnungen sind zehn Jahre aufzubewahren.")
    erase = await cite(files, "Personal data shall be erased without undue delay.")
    result = await run(ct.write_requirement, files, req_args(citation_ids=[books]))
    assert result.text.startswith("Wrote req_001 (GoBD, 1 citations) in requirements/req_001/")
    assert set(result.changed) == {"requirements/req_001/draft.md", ct.OUTPUT,
                                   "requirements/req_001/citations.json",
                                   "requirements/req_001/final.json"}
    second = await run(ct.write_requirement, files, req_args(
        statement="Personal data must be erased without undue delay.", regime="gdpr",
        citation_ids=[erase, books, erase], rationale=""))
    assert "Wrote req_002 (GDPR, 2 citations)" in second.text
    assert "holds 2 requirements (GDPR 1, GoBD 1)" in second.text
    out = await read_json(files, ct.OUTPUT)
    jsonschema.validate(out, SCHEMA)
    assert [r["id"] for r in out["requirements"]] == ["req_001", "req_002"]
    gdpr = out["requirements"][1]
    assert [c["id"] for c in gdpr["citations"]] == [erase, books]
    for cit in gdpr["citations"]:
        chunk = await files.read_text(f"chunks/{cit['chunk_id']}.md")
        assert chunk[cit["start"]:cit["end"]] == cit["quote"]
    assert await read_json(files, "requirements/req_002/final.json") == gdpr
    assert (await read_json(files, "requirements/req_002/citations.json"))["citations"] == \
        gdpr["citations"]
    draft = await files.read_text("requirements/req_002/draft.md")
    assert draft.startswith("# req_002 (GDPR)\n\nPersonal data must be erased")
    assert f"- {erase} chunk_001 [" in draft
    # the same content again keeps its id; an update by id replaces the statement
    same = await run(ct.write_requirement, files, req_args(citation_ids=[books]))
    assert same.text.startswith("Updated req_001")
    await run(ct.write_requirement, files, req_args(
        id="REQ-001", statement="Books, records and inventories must be kept ten years.",
        citation_ids=[books.lower()]))
    out = await read_json(files, ct.OUTPUT)
    assert len(out["requirements"]) == 2
    assert out["requirements"][0]["statement"].startswith("Books, records and inventories")


async def test_write_requirement_reports_schema_violations(files: WorkspaceFiles) -> None:
    await put_chunks(files, {"chunk_001": CHUNK})
    books = await cite(files, "Bücher und Aufzeichnungen sind zehn Jahre aufzubewahren.")
    msg = await fails("invalid_requirement", run(ct.write_requirement,
        files, req_args(regime="HGB", citation_ids=[books])))
    assert "req_001" in msg and "regime: 'HGB' is not one of ['GoBD', 'GDPR']" in msg
    assert "requirement.schema.json" in msg and "Nothing was written" in msg
    msg = await fails("invalid_requirement", run(ct.write_requirement,
        files, req_args(statement="Keep it.", citation_ids=[])))
    assert "statement: 'Keep it.' is too short" in msg
    assert "citations: [] should be non-empty" in msg
    assert await files.list("requirements") == [] and await files.read_optional(ct.OUTPUT) is None
    await fails("unknown_citation", run(ct.write_requirement,
        files, req_args(citation_ids=[books, "CIT-042"])))
    await fails("unknown_requirement", run(ct.write_requirement,
        files, req_args(id="req_007", citation_ids=[books])))
    # a final.json broken by hand is named, with the way to fix it
    await run(ct.write_requirement, files, req_args(citation_ids=[books]))
    final = await read_json(files, "requirements/req_001/final.json")
    await files.write_text("requirements/req_001/final.json",
                           json.dumps({**final, "regime": "tax"}), LIMITS.max_file_bytes)
    msg = await fails("invalid_requirement", run(ct.write_requirement,
        files, req_args(statement="Another requirement with a valid text.",
                        citation_ids=[books])))
    assert "requirements/req_001/final.json" in msg and "regime" in msg
    assert "write_requirement(id='req_001')" in msg


class SearchServer(ThreadingHTTPServer):
    status = 200
    seen: list[tuple[str, dict, str | None]]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/search"


class SearchHandler(BaseHTTPRequestHandler):
    server: SearchServer

    def do_GET(self) -> None:  # noqa: N802
        url = urlparse(self.path)
        query = parse_qs(url.query)
        self.server.seen.append((url.path, query, self.headers.get("Authorization")))
        n = int(query["n"][0])
        body = {"results": [{"title": f"Result {i}", "url": f"https://example.org/{i}",
                             "snippet": f"GoBD   snippet {i}"} for i in range(1, n + 3)]}
        data = json.dumps(body).encode() if self.server.status == 200 else b"nope"
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        if self.server.status == 429:
            self.send_header("Retry-After", "7")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def search_server():
    server = SearchServer(("127.0.0.1", 0), SearchHandler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


async def test_web_search_against_a_local_server(files: WorkspaceFiles, search_server,
                                                 monkeypatch) -> None:
    monkeypatch.setenv(URL_ENV, search_server.url)
    monkeypatch.setenv(KEY_ENV, "secret-key")
    result = await run(web.web_search, files,
                       web.WebSearchArgs(query="GoBD Aufbewahrung", max_results=2))
    assert result.text == ("2 results for 'GoBD Aufbewahrung':\n"
                           "1. Result 1\n   https://example.org/1\n   GoBD snippet 1\n"
                           "2. Result 2\n   https://example.org/2\n   GoBD snippet 2")
    assert result.changed == []
    assert search_server.seen == [("/search", {"q": ["GoBD Aufbewahrung"], "n": ["2"]},
                                   "Bearer secret-key")]
    search_server.status = 401
    msg = await fails("web_search_failed", run(web.web_search,
        files, web.WebSearchArgs(query="GoBD")))
    assert "HTTP 401" in msg
    search_server.status = 500  # retried by Temporal: the error propagates
    with pytest.raises(httpx.HTTPStatusError):
        await run(web.web_search, files, web.WebSearchArgs(query="GoBD"))
    search_server.status = 429
    with pytest.raises(ApplicationError) as info:
        await run(web.web_search, files, web.WebSearchArgs(query="GoBD"))
    assert info.value.next_retry_delay is not None
    assert info.value.next_retry_delay.total_seconds() == 7


async def test_web_search_unreachable_provider_raises(files: WorkspaceFiles) -> None:
    set_provider(HttpSearchProvider("http://127.0.0.1:9/search", timeout=2))
    try:
        with pytest.raises(httpx.TransportError):
            await run(web.web_search, files, web.WebSearchArgs(query="GoBD"))
    finally:
        set_provider(None)


async def test_web_search_unavailable_without_configuration(files: WorkspaceFiles,
                                                            monkeypatch) -> None:
    monkeypatch.delenv(URL_ENV, raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)
    await fails("web_search_unavailable", run(web.web_search,
        files, web.WebSearchArgs(query="GoBD")))
