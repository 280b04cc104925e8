"""A listing is what an activity attempt saw, for the write fence as much as a read or a
HEAD (activities/storage/files.py): a listed file is written only over the version listed,
and a file a whole listing of its folder did not show only if it is still missing. That is
how chunk_document writes a large document's chunks without a HEAD each, 16 at a time, and
writes nothing but the manifest when the chunks already hold their text."""

from __future__ import annotations

import uuid

import pytest

from switchback.activities.storage.files import WorkspaceChanged, WorkspaceFiles
from switchback.activities.tools.catalog import HANDLERS
from switchback.workflows.contract import ToolLimits, WorkspaceRef
from switchback_documents.document_tools import DocumentArgs

B = "switchback"
LIMITS = ToolLimits(read_max_chars=20_000, max_file_bytes=5_000_000, min_todos=1, max_todos=20)


def job() -> WorkspaceRef:
    return WorkspaceRef(bucket=B, job_id=f"listed-{uuid.uuid4().hex[:8]}")


async def test_a_write_after_a_listing_is_fenced_on_what_the_listing_showed(s3):
    ws = job()
    await s3.put(B, f"{ws.job_id}/notes/a.md", b"a1")
    attempt = WorkspaceFiles(s3, ws)
    assert [o.key for o in await attempt.list("notes")] == ["notes/a.md"]
    await s3.put(B, f"{ws.job_id}/notes/a.md", b"a2 by a later step")  # after the listing
    await s3.put(B, f"{ws.job_id}/notes/b.md", b"b by a later step")  # not in the listing
    with pytest.raises(WorkspaceChanged):
        await attempt.write_text("notes/a.md", "late", 1000)
    with pytest.raises(WorkspaceChanged):
        await attempt.write_text("notes/b.md", "late", 1000)
    assert await s3.get(B, f"{ws.job_id}/notes/a.md") == b"a2 by a later step"
    assert await s3.get(B, f"{ws.job_id}/notes/b.md") == b"b by a later step"
    assert await attempt.write_text("notes/c.md", "new", 1000) == "notes/c.md"  # still missing


async def test_chunking_again_writes_only_the_chunks_whose_text_changed(s3):
    ws = job()
    sections = [f"# Part {i}\n\n" + f"Sentence {i} of the document. " * 40 + "\n\n"
                for i in range(30)]
    await s3.put(B, f"{ws.job_id}/documents/d.md", "".join(sections).encode())
    puts: list[str] = []
    real = s3.put

    async def put(bucket, key, data, content_type="application/octet-stream", **cond):
        puts.append(key.split("/", 1)[1])
        return await real(bucket, key, data, content_type, **cond)
    s3.put = put
    chunk = HANDLERS["chunk_document"]
    first = await chunk(WorkspaceFiles(s3, ws), DocumentArgs(path="documents/d.md"), LIMITS)
    n = int(first.text.split(" into ")[1].split(" ")[0])
    assert n >= 30 and len(puts) == n + 1  # every chunk, then the manifest
    puts.clear()
    again = await chunk(WorkspaceFiles(s3, ws), DocumentArgs(path="documents/d.md"), LIMITS)
    assert again.text == first.text and puts == ["chunks/manifest.json"]
    sections[7] = sections[7].replace("Sentence 7", "Changed 7")
    await real(B, f"{ws.job_id}/documents/d.md", "".join(sections).encode())
    puts.clear()
    await chunk(WorkspaceFiles(s3, ws), DocumentArgs(path="documents/d.md"), LIMITS)
    changed = [p for p in puts if p != "chunks/manifest.json"]
    assert changed and len(changed) < n
    for key in changed:
        assert b"Changed 7" in (await s3.get(B, f"{ws.job_id}/{key}") or b"")
