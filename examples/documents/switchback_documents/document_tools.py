"""Domain tools of the creator job: document text extraction and chunking.

Both answer with counts and paths, never with the document's text: the text is
in the workspace, where the model reads what it needs.

- `extract_document_text(path)` -> `extracted/<name>.txt`
- `chunk_document(path)` -> `chunks/chunk_NNN.md` + `chunks/manifest.json`
  (ids, source, page, heading path, character offsets into the extracted text).
  Chunk ids continue across documents; chunking a document again replaces its
  chunks in place, so a retried call leaves the same files (a chunk file that already
  holds its text is not written again; the others are written 16 at a time).

Written with the public tool API (`switchback.tool`) and registered like any tool package,
through the entry point group `switchback.tools` (pyproject.toml).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import posixpath

from pydantic import BaseModel, Field

from switchback import Files, ToolContext, ToolError, ToolResult, tool
from switchback.activities.bounded_gather import bounded_gather
from switchback.activities.storage.s3 import UNLIMITED
from switchback_documents.extract import DocumentError, chunk_text, extract_text, manifest_entry

MANIFEST = "chunks/manifest.json"
WRITES = 16  # chunk files written (or removed) at a time


class DocumentArgs(BaseModel):
    path: str = Field(description="Path of a document in the workspace, e.g. 'documents/a.pdf'")


def extracted_path(source: str) -> str:
    stem = posixpath.splitext(posixpath.basename(source))[0]
    return f"extracted/{stem}.txt"


async def _extract(files: Files, path: str):
    data = await files.read_bytes(path)
    try:  # parsing (pypdf is pure Python) runs in a thread, off the worker's event loop
        return await asyncio.to_thread(extract_text, path, data)
    except DocumentError as e:
        raise ToolError(e.code, str(e)) from e


@tool
async def extract_document_text(ctx: ToolContext, a: DocumentArgs) -> ToolResult:
    """Extract the text of a document (PDF, Markdown, text, HTML) to extracted/<name>.txt.
    Answers with page and section counts, not the text."""
    doc = await _extract(ctx.files, a.path)
    out = await ctx.files.write_text(extracted_path(a.path), doc.text)
    pages = f"{doc.pages} pages, " if doc.pages else ""
    return ToolResult(f"Extracted {a.path} ({doc.format}): {pages}{doc.sections} sections, "
                      f"{len(doc.text)} characters -> {out}", [out])


@tool
async def chunk_document(ctx: ToolContext, a: DocumentArgs) -> ToolResult:
    """Split a document into structure-aware chunks: chunks/chunk_NNN.md plus
    chunks/manifest.json (ids, source, page, heading path, offsets)."""
    files = ctx.files
    doc = await _extract(files, a.path)
    raw = await files.read_optional(MANIFEST)
    manifest: list[dict] = json.loads(raw)["chunks"] if raw else []
    own = [e for e in manifest if e["source"] == a.path]
    others = [e for e in manifest if e["source"] != a.path]
    start = (min(_num(e["id"]) for e in own) if own
             else max((_num(e["id"]) for e in manifest), default=0) + 1)
    chunks = await asyncio.to_thread(chunk_text, a.path, doc, start_index=start)
    taken = {_num(e["id"]) for e in others}
    if any(_num(c.id) in taken for c in chunks):  # re-chunked into more pieces: append instead
        start = max(taken | {_num(e["id"]) for e in own}) + 1
        chunks = await asyncio.to_thread(chunk_text, a.path, doc, start_index=start)
    # only chunks whose content is not there already (a listed ETag is the MD5 of a plain
    # PUT's bytes): chunking the same document again writes nothing but the manifest
    there = {o.key: o.etag for o in await files.list("chunks", limit=UNLIMITED)}
    digests = await asyncio.to_thread(lambda: [_md5(c.text) for c in chunks])
    fresh = [c for c, d in zip(chunks, digests, strict=True)
             if there.get(f"chunks/{c.id}.md") != d]
    changed = await bounded_gather(fresh, lambda c: files.write_text(f"chunks/{c.id}.md",
                                                                     c.text), WRITES)
    new_ids = {c.id for c in chunks}
    await bounded_gather([e["id"] for e in own if e["id"] not in new_ids],
                         lambda stale: files.delete(f"chunks/{stale}.md"), WRITES)
    entries = sorted(others + [manifest_entry(c) for c in chunks], key=lambda e: _num(e["id"]))
    body = json.dumps({"chunks": entries}, ensure_ascii=False, indent=1)
    changed.append(await files.write_text(MANIFEST, body))
    first, last = (chunks[0].id, chunks[-1].id) if chunks else ("-", "-")
    return ToolResult(f"Chunked {a.path} into {len(chunks)} chunks ({first} .. {last}); "
                      f"manifest {MANIFEST} lists {len(entries)} chunks in all.", changed)


def _md5(text: str) -> str:
    return hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def _num(chunk_id: str) -> int:
    return int(chunk_id.rsplit("_", 1)[1])
