"""Domain tools of the creator job: document text extraction and chunking.

Both answer with counts and paths, never with the document's text: the text is
in the workspace, where the model reads what it needs.

- `extract_document_text(path)` -> `extracted/<name>.txt`
- `chunk_document(path)` -> `chunks/chunk_NNN.md` + `chunks/manifest.json`
  (ids, source, page, heading path, character offsets into the extracted text).
  Chunk ids continue across documents; chunking a document again replaces its
  chunks in place, so a retried call leaves the same files.
"""

from __future__ import annotations

import asyncio
import json
import posixpath

from activities.documents import DocumentError, chunk_text, extract_text, manifest_entry
from activities.storage.files import ToolError, WorkspaceFiles
from activities.tools.registry import DocumentArgs, ToolResult
from workflows.contract import ToolLimits

MANIFEST = "chunks/manifest.json"


def extracted_path(source: str) -> str:
    stem = posixpath.splitext(posixpath.basename(source))[0]
    return f"extracted/{stem}.txt"


async def _extract(files: WorkspaceFiles, path: str):
    data = await files.read_bytes(path)
    try:  # parsing (pypdf is pure Python) runs in a thread, off the worker's event loop
        return await asyncio.to_thread(extract_text, path, data)
    except DocumentError as e:
        raise ToolError(e.code, str(e)) from e


async def extract_document_text(files: WorkspaceFiles, a: DocumentArgs,
                                limits: ToolLimits) -> ToolResult:
    doc = await _extract(files, a.path)
    out = await files.write_text(extracted_path(a.path), doc.text, limits.max_file_bytes)
    pages = f"{doc.pages} pages, " if doc.pages else ""
    return ToolResult(f"Extracted {a.path} ({doc.format}): {pages}{doc.sections} sections, "
                      f"{len(doc.text)} characters -> {out}", [out])


async def chunk_document(files: WorkspaceFiles, a: DocumentArgs,
                         limits: ToolLimits) -> ToolResult:
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
    changed = [await files.write_text(f"chunks/{c.id}.md", c.text, limits.max_file_bytes)
               for c in chunks]
    new_ids = {c.id for c in chunks}
    for stale in own:
        if stale["id"] not in new_ids:
            await files.delete(f"chunks/{stale['id']}.md")
    entries = sorted(others + [manifest_entry(c) for c in chunks], key=lambda e: _num(e["id"]))
    body = json.dumps({"chunks": entries}, ensure_ascii=False, indent=1)
    changed.append(await files.write_text(MANIFEST, body, limits.max_file_bytes))
    first, last = (chunks[0].id, chunks[-1].id) if chunks else ("-", "-")
    return ToolResult(f"Chunked {a.path} into {len(chunks)} chunks ({first} .. {last}); "
                      f"manifest {MANIFEST} lists {len(entries)} chunks in all.", changed)


def _num(chunk_id: str) -> int:
    return int(chunk_id.rsplit("_", 1)[1])
