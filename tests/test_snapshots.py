"""Phase snapshots on a real SeaweedFS are incremental: a snapshot copies only the contents
no earlier snapshot stored, learns which those are from the latest earlier snapshot (never
by listing the blobs, which grow with the job), never lists `.switchback/`, and what it
records restores the workspace as it was (rewind's restore_workspace)."""

from __future__ import annotations

import uuid

from activities.storage.restores import RestoreActivities
from activities.storage.snapshots import SnapshotActivities
from workflows.contract import RestoreRequest, SnapshotRequest, WorkspaceRef, layout

BUCKET = "switchback"


class Spy:
    """Records the copies and listings the real store makes."""

    def __init__(self, s3) -> None:
        self.copies: list[str] = []
        self.listed: list[str] = []
        real_copy, real_list = s3.copy, s3.list

        async def copy(bucket, source, target, source_etag=None):
            self.copies.append(source)
            await real_copy(bucket, source, target, source_etag)

        async def listing(bucket, prefix, limit=10_000, *, skip=None):
            self.listed.append(prefix)
            return await real_list(bucket, prefix, limit, skip=skip)
        s3.copy, s3.list = copy, listing


async def snapshot(s3, ws: WorkspaceRef, phase: int) -> int:
    return await SnapshotActivities(s3).snapshot_phase(SnapshotRequest(
        workspace=ws, phase=phase, state={"phase": phase}))


async def read(s3, ws: WorkspaceRef, path: str) -> str | None:
    data = await s3.get(BUCKET, f"{ws.job_id}/{path}")
    return None if data is None else data.decode()


async def test_a_snapshot_copies_only_what_changed_and_restores_what_it_recorded(s3):
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"snap-{uuid.uuid4().hex[:8]}")

    async def put(path: str, body: str) -> None:
        await s3.put(BUCKET, f"{ws.job_id}/{path}", body.encode())
    for i in range(40):
        await put(f"work/f_{i:02d}.md", f"file {i}\n")
    await put("same_a.md", "twin\n")
    await put("same_b.md", "twin\n")  # the same content: one blob
    for i in range(30):  # a conversation: never listed, never copied
        await put(f".switchback/conversations/c/{i:06d}.json", "{}")
    spy = Spy(s3)
    assert await snapshot(s3, ws, 1) == 42
    assert len(spy.copies) == 41  # the first snapshot of a job looks for an earlier one:
    assert spy.listed == [f"{ws.job_id}/{layout.snapshots_dir()}",
                          f"{ws.job_id}/{layout.blobs_dir()}", f"{ws.job_id}/"]
    spy.copies.clear()
    spy.listed.clear()
    await put("work/f_03.md", "file 3, changed\n")
    await put("new.md", "new\n")
    await s3.delete(BUCKET, f"{ws.job_id}/work/f_07.md")
    assert await snapshot(s3, ws, 2) == 42
    assert sorted(spy.copies) == [f"{ws.job_id}/new.md", f"{ws.job_id}/work/f_03.md"]
    assert spy.listed == [f"{ws.job_id}/"]  # phase 1's snapshot named the stored blobs:
    # one listing of the workspace (it jumps over .switchback/), no listing of the blobs
    spy.copies.clear()
    assert await snapshot(s3, ws, 3) == 42 and spy.copies == []  # unchanged: no copy
    # a gap in the phase numbers: the latest earlier snapshot still tells
    await put("later.md", "later\n")
    assert await snapshot(s3, ws, 6) == 43 and spy.copies == [f"{ws.job_id}/later.md"]
    # phase 1's snapshot restores phase 1's workspace
    result = await RestoreActivities(s3).restore_workspace(RestoreRequest(
        workspace=ws, phase=1, from_phase=6))
    assert (result.found, result.restored, result.deleted) == (True, 2, 2)
    assert await read(s3, ws, "work/f_03.md") == "file 3\n"
    assert await read(s3, ws, "work/f_07.md") == "file 7\n"
    assert await read(s3, ws, "new.md") is None and await read(s3, ws, "later.md") is None


async def test_without_an_earlier_snapshot_the_blobs_are_listed_and_not_copied_again(s3):
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"snap-{uuid.uuid4().hex[:8]}")
    await s3.put(BUCKET, f"{ws.job_id}/a.md", b"a\n")
    await snapshot(s3, ws, 1)
    await s3.delete(BUCKET, f"{ws.job_id}/{layout.snapshot_path(1)}")  # the record is gone
    spy = Spy(s3)
    assert await snapshot(s3, ws, 2) == 1
    assert spy.copies == [] and f"{ws.job_id}/{layout.blobs_dir()}" in spy.listed


async def test_a_retry_after_a_timed_out_attempt_copies_only_the_rest(s3):
    """Over LIST_BLOBS_ABOVE contents to copy, the blobs are listed first: an attempt that
    timed out midway (a local activity's 30 s) leaves its copies, and the retry goes on."""
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"snap-{uuid.uuid4().hex[:8]}")
    await s3.put(BUCKET, f"{ws.job_id}/a.md", b"a\n")
    await snapshot(s3, ws, 1)
    etags = [await s3.put(BUCKET, f"{ws.job_id}/w/f_{i:03d}.md", f"{i}\n".encode())
             for i in range(600)]
    for i in range(400):  # what the timed-out attempt copied
        await s3.copy(BUCKET, f"{ws.job_id}/w/f_{i:03d}.md",
                      f"{ws.job_id}/{layout.blob_path(etags[i])}")
    spy = Spy(s3)
    assert await snapshot(s3, ws, 2) == 601
    assert sorted(spy.copies) == [f"{ws.job_id}/w/f_{i:03d}.md" for i in range(400, 600)]
