"""search_files and list_files on a real SeaweedFS: complete (every file searched, past the
500 files the old tool stopped at), never stale (a file changed between two searches is
found with its new content, a deleted one is gone: the worker's content cache is keyed by
ETag), confined to the job's own prefix, blind to switchback's internals however many
there are, and honest about what it did not search."""

from __future__ import annotations

import asyncio
import uuid

from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.tools import file_tools as tools
from switchback.activities.tools.registry import ListFilesArgs, SearchFilesArgs
from switchback.workflows.contract import ToolLimits, WorkspaceRef

BUCKET = "switchback"
LIMITS = ToolLimits(read_max_chars=20_000, max_file_bytes=5_000_000, min_todos=1, max_todos=20)


async def fill(s3, job_id: str, files: dict[str, str]) -> None:
    sem = asyncio.Semaphore(16)

    async def put(path: str, body: str) -> None:
        async with sem:
            await s3.put(BUCKET, f"{job_id}/{path}", body.encode())
    await asyncio.gather(*(put(p, b) for p, b in files.items()))


def job() -> WorkspaceRef:
    return WorkspaceRef(bucket=BUCKET, job_id=f"search-{uuid.uuid4().hex[:8]}")


async def search(s3, ws: WorkspaceRef, query: str, path: str = "") -> str:
    return (await tools.search_files(WorkspaceFiles(s3, ws), SearchFilesArgs(
        query=query, path=path), LIMITS)).text


class CountingGets:
    """Counts the GETs the store makes (the real store does them)."""

    def __init__(self, s3) -> None:
        self.n, self.real = 0, s3.get_object

        async def get_object(bucket: str, key: str):
            self.n += 1
            return await self.real(bucket, key)
        s3.get_object = get_object


async def test_every_file_is_searched_and_a_warm_search_reads_none_again(s3):
    ws = job()
    files = {f"notes/d{i // 100}/n_{i:04d}.md": f"note {i}\nnothing here\n" for i in range(700)}
    files["notes/d6/n_0690.md"] = "note 690\nthe NEEDLE is here\n"
    await fill(s3, ws.job_id, files)
    gets = CountingGets(s3)
    first = await search(s3, ws, "needle")
    assert first == "notes/d6/n_0690.md:2: the NEEDLE is here"
    assert gets.n == 700  # cold: each file once
    assert await search(s3, ws, "absent-word") == "No match for 'absent-word' in 700 files."
    assert gets.n == 700  # warm: the listing's ETags found every file in the cache


async def test_a_changed_file_is_found_with_its_new_content_and_a_deleted_one_is_gone(s3):
    ws = job()
    await fill(s3, ws.job_id, {"a.md": "alpha version one\n", "b.md": "beta\n",
                               "c.md": "gamma version one\n"})
    assert "a.md:1: alpha version one" in await search(s3, ws, "version one")
    await s3.put(BUCKET, f"{ws.job_id}/a.md", b"alpha\nversion two now\n")
    await s3.delete(BUCKET, f"{ws.job_id}/c.md")
    assert await search(s3, ws, "version one") == "No match for 'version one' in 2 files."
    assert await search(s3, ws, "version") == "a.md:2: version two now"


async def test_another_jobs_files_and_switchbacks_internals_are_never_returned(s3):
    ws = job()
    other = WorkspaceRef(bucket=BUCKET, job_id=ws.job_id + "0")  # shares the id's first chars
    await fill(s3, other.job_id, {"secret.md": "needle of another job\n"})
    await fill(s3, ws.job_id, {
        "mine.md": "my needle\n", ".switchback/conversations/c/000001.json": "needle",
        ".switchback/blobs/abc": "needle", "subjobs/child/.switchback/owner.json": "needle",
        "subjobs/child/result.md": "child needle\n"})
    assert await search(s3, ws, "needle") == ("mine.md:1: my needle\n"
                                              "subjobs/child/result.md:1: child needle")
    assert await search(s3, other, "needle") == "secret.md:1: needle of another job"


async def test_files_not_searched_and_the_match_cap_are_said(s3):
    ws = job()
    await fill(s3, ws.job_id, {"big.txt": "needle\n" * 200_000,  # 1.4 MB: over the limit
                               **{f"m_{i:02d}.md": "needle\n" for i in range(60)}})
    out = await search(s3, ws, "needle")
    lines = out.splitlines()
    assert len([x for x in lines if x.startswith("m_")]) == tools.MAX_MATCHES
    assert "... stopped at 50 matches" in out
    assert "searched 60 of 61 files; not searched: 1 over 1000000 bytes" in out


async def test_listing_skips_internals_however_many_precede_the_files(s3):
    """`.switchback/` sorts before every letter: 1,600 internal keys (a long job's
    conversation) used to fill the whole listing budget, and list_files showed nothing."""
    ws = job()
    await fill(s3, ws.job_id, {f".switchback/conversations/c/{i:06d}.json": "{}"
                               for i in range(1600)})
    await fill(s3, ws.job_id, {"plan.md": "the plan\n", "work/a.md": "needle\n"})
    listed = (await tools.list_files(WorkspaceFiles(s3, ws), ListFilesArgs(), LIMITS)).text
    assert listed.splitlines() == ["plan.md  (9 bytes)", "work/a.md  (7 bytes)"]
    assert await search(s3, ws, "needle") == "work/a.md:1: needle"
