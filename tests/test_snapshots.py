"""Phase snapshots on a real SeaweedFS are copy-on-write: a snapshot lists the workspace once
(never `.switchback/`) and copies nothing; a version it names is copied to the blobs when a
write through switchback replaces or deletes it, once; and what it records still restores
the workspace as it was (rewind's restore_workspace, rerun's) - also after a rewind replaced
files a later snapshot names."""

from __future__ import annotations

import json
import uuid

import pytest
from temporalio.exceptions import ApplicationError

from switchback.activities import attempts
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.storage.kept_versions import SnapshotFiles
from switchback.activities.storage.snapshots import SnapshotActivities, restore_workspace, unkept
from switchback.activities.storage.workspace_restore import RestoreActivities
from switchback.workflows.contract import RestoreRequest, SnapshotRequest, WorkspaceRef, layout

BUCKET = "switchback"


class Spy:
    """Records the copies and listings the real store makes."""

    def __init__(self, s3) -> None:
        self.copies: list[str] = []
        self.listed: list[str] = []
        real_copy, real_list = s3.copy, s3.list

        async def copy(bucket, source, target, source_etag=None):
            self.copies.append(source.split("/", 1)[1])
            await real_copy(bucket, source, target, source_etag)

        async def listing(bucket, prefix, limit=10_000, *, skip=None):
            self.listed.append(prefix)
            return await real_list(bucket, prefix, limit, skip=skip)
        s3.copy, s3.list = copy, listing


def job() -> WorkspaceRef:
    return WorkspaceRef(bucket=BUCKET, job_id=f"snap-{uuid.uuid4().hex[:8]}")


async def snapshot(s3, ws: WorkspaceRef, phase: int) -> WorkspaceRef:
    """Phase `phase`'s snapshot; the workspace as the workflow names it from then on."""
    await SnapshotActivities(s3).snapshot_phase(SnapshotRequest(
        workspace=ws, phase=phase, state={"phase": phase}))
    return ws.model_copy(update={"snapshot": phase})


async def put(s3, ws: WorkspaceRef, path: str, body: str) -> None:
    """A write from outside switchback (no copy-on-write)."""
    await s3.put(BUCKET, f"{ws.job_id}/{path}", body.encode())


async def write(s3, ws: WorkspaceRef, path: str, body: str) -> None:
    """A tool's write: one activity attempt."""
    await WorkspaceFiles(s3, ws).write_text(path, body, 1 << 20)


async def read(s3, ws: WorkspaceRef, path: str) -> str | None:
    data = await s3.get(BUCKET, f"{ws.job_id}/{path}")
    return None if data is None else data.decode()


async def test_a_snapshot_lists_the_workspace_once_and_copies_nothing(s3):
    ws = job()
    for i in range(40):
        await put(s3, ws, f"work/f_{i:02d}.md", f"file {i}\n")
    for i in range(30):  # a conversation: never listed, never copied
        await put(s3, ws, f".switchback/conversations/c/{i:06d}.json", "{}")
    spy = Spy(s3)
    await snapshot(s3, ws, 1)
    assert spy.copies == [] and spy.listed == [f"{ws.job_id}/"]
    record = json.loads(await read(s3, ws, layout.snapshot_path(1)) or "{}")
    assert record["blobs"] == "on_write" and len(record["files"]) == 40


async def test_a_version_the_snapshot_names_is_kept_once_when_replaced_and_restored(s3):
    ws = job()
    for i in range(10):
        await put(s3, ws, f"work/f_{i:02d}.md", f"file {i}\n")
    ws = await snapshot(s3, ws, 1)
    spy = Spy(s3)
    await write(s3, ws, "work/f_03.md", "file 3, changed\n")  # phase 1's version: kept
    await write(s3, ws, "work/f_03.md", "file 3, changed again\n")  # (a later step) not
    await write(s3, ws, "new.md", "new\n")  # created: nothing to keep
    await write(s3, ws, "new.md", "new, changed\n")  # created in this phase: not kept
    await WorkspaceFiles(s3, ws).delete("work/f_07.md")  # kept
    assert spy.copies == ["work/f_03.md", "work/f_07.md"]
    spy.copies.clear()
    ws = await snapshot(s3, ws, 2)
    assert spy.copies == []
    await write(s3, ws, "new.md", "new, phase 3\n")  # phase 2 names this version: kept
    assert spy.copies == ["new.md"]
    # a rerun from phase 1 and from phase 2: the live versions where they still are, the
    # blobs for the rest
    for phase, want in ((1, {"work/f_03.md": "file 3\n", "work/f_07.md": "file 7\n",
                             "new.md": None}),
                        (2, {"work/f_03.md": "file 3, changed again\n", "work/f_07.md": None,
                             "new.md": "new, changed\n"})):
        files = await _snapshot_files(s3, ws, phase)
        other = job()
        assert await restore_workspace(s3, ws, files, other.job_id) == len(files)
        for path, text in want.items():
            assert await read(s3, other, path) == text, (phase, path)
        assert await read(s3, other, "work/f_05.md") == "file 5\n"
    # the rewind to phase 1 puts phase 1's workspace back
    result = await RestoreActivities(s3).restore_workspace(RestoreRequest(
        workspace=ws, phase=1, from_phase=3))
    assert (result.found, result.restored, result.deleted) == (True, 2, 1)
    assert await read(s3, ws, "work/f_03.md") == "file 3\n"
    assert await read(s3, ws, "work/f_07.md") == "file 7\n"
    assert await read(s3, ws, "new.md") is None
    # ... and kept what it replaced: phase 2's snapshot still restores (a rerun from it)
    files = await _snapshot_files(s3, ws, 2)
    other = job()
    await restore_workspace(s3, ws, files, other.job_id)
    assert await read(s3, other, "work/f_03.md") == "file 3, changed again\n"
    assert await read(s3, other, "new.md") == "new, changed\n"


async def _snapshot_files(s3, ws: WorkspaceRef, phase: int) -> dict:
    """The files phase `phase`'s snapshot names (what load_snapshot returns first)."""
    return json.loads(await read(s3, ws, layout.snapshot_path(phase)) or "{}")["files"]


async def test_without_a_named_snapshot_every_replaced_version_is_kept(s3):
    """A request that names no snapshot (0: before the first, a workflow from before
    copy-on-write, a job's own documents pipeline) or one that is missing keeps each version it
    replaces: more copies, never a lost version."""
    ws = job()
    await put(s3, ws, "a.md", "a\n")
    named = await snapshot(s3, ws, 1)
    spy = Spy(s3)
    await write(s3, ws, "a.md", "a 2\n")  # names none
    await write(s3, named.model_copy(update={"snapshot": 7}), "a.md", "a 3\n")  # missing
    assert spy.copies == ["a.md", "a.md"]


async def test_a_snapshot_that_copied_eagerly_keeps_nothing_more(s3):
    """A job snapshotted by the code before copy-on-write (no "blobs" in its record) stored
    every named version already: a write replaces without a copy."""
    ws = job()
    await put(s3, ws, "a.md", "a\n")
    etag = await s3.head(BUCKET, f"{ws.job_id}/a.md")
    await s3.put(BUCKET, f"{ws.job_id}/{layout.snapshot_path(1)}", json.dumps(
        {"phase": 1, "files": {"a.md": {"etag": etag, "size": 2}}, "state": {}}).encode())
    await s3.copy(BUCKET, f"{ws.job_id}/a.md", f"{ws.job_id}/{layout.blob_path(etag)}")
    spy = Spy(s3)
    await write(s3, ws.model_copy(update={"snapshot": 1}), "a.md", "a 2\n")
    assert spy.copies == []


async def test_a_late_attempt_keeps_every_version_it_replaces(s3):
    """An attempt past its deadline may write after the workflow took a later snapshot than
    the one its request names: it keeps what it replaces whatever that snapshot says."""
    ws = job()
    ws = await snapshot(s3, ws, 1)
    await write(s3, ws, "a.md", "a\n")  # created in phase 1: phase 1 does not name it
    files = WorkspaceFiles(s3, ws)  # an attempt that read the file, then stalled
    await files.read_text("a.md")
    spy = Spy(s3)
    attempts.begin(0)  # ... past its deadline
    try:
        await files.write_text("a.md", "a, late\n", 1 << 20)
    finally:
        attempts.begin(None)
    assert spy.copies == ["a.md"]


async def test_a_change_made_outside_switchback_is_named_not_restored_silently(s3):
    ws = job()
    await put(s3, ws, "a.md", "a\n")
    await put(s3, ws, "b.md", "b\n")
    ws = await snapshot(s3, ws, 1)
    await put(s3, ws, "a.md", "changed straight in S3\n")  # no copy-on-write
    files = await _snapshot_files(s3, ws, 1)
    with pytest.raises(LookupError, match=r"1 file\(s\): a\.md"):
        await restore_workspace(s3, ws, files, job().job_id)
    with pytest.raises(ApplicationError, match="a.md") as e:
        await RestoreActivities(s3).restore_workspace(RestoreRequest(
            workspace=ws, phase=1, from_phase=2))
    assert e.value.type == "SnapshotIncomplete"


async def test_the_worker_reads_a_snapshot_s_file_list_once(s3):
    ws = job()
    for i in range(5):
        await put(s3, ws, f"f_{i}.md", f"{i}\n")
    ws = await snapshot(s3, ws, 1)
    cache, gets = SnapshotFiles(), []
    real_get = s3.get

    async def get(bucket, key):
        gets.append(key)
        return await real_get(bucket, key)
    s3.get = get
    for _ in range(3):
        held = await cache.held(s3, ws)
        assert held is not None and sorted(held) == [f"f_{i}.md" for i in range(5)]
    assert gets == [f"{ws.job_id}/{layout.snapshot_path(1)}"]
    assert await cache.held(s3, ws.model_copy(update={"snapshot": 0})) is None
    # bounded by paths in all: a second snapshot's list pushes the first out (7 < 5 + 5)
    small = SnapshotFiles(max_paths=7)
    ws2 = await snapshot(s3, ws, 2)
    for w in (ws, ws2, ws):
        await small.held(s3, w)
    assert gets[1:] == [f"{ws.job_id}/{layout.snapshot_path(p)}" for p in (1, 2, 1)]
    assert small.paths == 5


async def test_a_nested_child_keeps_every_version_it_replaces(s3):
    """A child's files lie in its parent's workspace too: a snapshot of the parent, which
    the child's requests do not name, may hold the version a child replaces."""
    parent = job()
    child = WorkspaceRef(bucket=BUCKET, job_id=layout.subjob_prefix(parent.job_id, "c1"))
    child = await snapshot(s3, child, 1)
    await write(s3, child, "a.md", "a 1\n")  # the child's phase 1 creates it
    await snapshot(s3, parent, 2)  # the parent's phase 2 starts: it names "a 1"
    spy = Spy(s3)
    await write(s3, child, "a.md", "a 2\n")  # the child's own snapshot does not name "a 1"
    assert spy.copies == ["subjobs/c1/a.md"]
    files = await _snapshot_files(s3, parent, 2)
    other = job()
    await restore_workspace(s3, parent, files, other.job_id)
    assert await read(s3, other, "subjobs/c1/a.md") == "a 1\n"


async def test_a_job_keeps_exactly_the_versions_its_snapshots_name_that_it_replaced(
        client, task_queue, start_job, model_server, s3):
    """End to end: the workflow names each phase's snapshot in its requests, so a file written
    three times in one phase leaves no blob, while workspace.md and main_plan.md, which each
    phase start's snapshot names and the next phase replaces, leave one each - also when the
    replacing write is the phase's first step, whose model call ran before the snapshot. Every
    snapshot of the job still restores: each version it names is live or kept."""
    from tests.conftest import running_worker
    from tests.scripts import bootstrap, call, finish, step, tactical, transition
    notes = [step(call("write_file", path="work/notes.md", content=f"notes {i}\n"),
                  call("todo_complete", notes=f"notes {i}")) for i in range(1, 4)]
    # phase B writes workspace.md; the last phase's first step replaces that version, which
    # only its own snapshot names (taken after that step's model call, before its tools)
    during = [step(call("write_file", path="workspace.md", content="# Workspace\n\nB\n"))]
    script = (bootstrap(n_todos=3) + notes + transition("B", 2) + during + tactical(2, "b")
              + finish())
    async with running_worker(client, task_queue):
        handle = await start_job(script, model_server, instructions="x")
        assert (await handle.result()).status == "completed"
    root = f"{handle.id}/"
    snaps = {int(o.key.rsplit("_", 1)[1][:-5]): json.loads(await s3.get(BUCKET, o.key) or b"")
             for o in await s3.list(BUCKET, root + layout.snapshots_dir())}
    live = {o.key[len(root):]: o.etag for o in await s3.list(BUCKET, root)}
    blobs = {o.key.rsplit("/", 1)[1] for o in await s3.list(BUCKET, root + layout.blobs_dir())}
    named = {m["etag"] for s in snaps.values() for m in s["files"].values()}
    assert len(snaps) >= 4 and all(s["blobs"] == "on_write" for s in snaps.values())
    for phase, snap in snaps.items():  # every snapshot restores
        for path, meta in snap["files"].items():
            assert live.get(path) == meta["etag"] or meta["etag"] in blobs, (phase, path)
    assert await unkept(s3, WorkspaceRef(bucket=BUCKET, job_id=handle.id)) == []
    await s3.delete(BUCKET, f"{root}{layout.blob_path(sorted(blobs)[0])}")  # (it can fail)
    assert len(await unkept(s3, WorkspaceRef(bucket=BUCKET, job_id=handle.id))) >= 1
    assert blobs <= named  # nothing kept that no snapshot names (notes.md's 1st, 2nd)
    replaced = {m["etag"] for s in snaps.values() for p, m in s["files"].items()
                if live.get(p) != m["etag"]}
    assert blobs == replaced and len(blobs) >= 4  # workspace.md x2+, main_plan.md, todos.yaml
