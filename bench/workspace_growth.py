"""Workspace operations against workspace size (issue #18, item 3), SeaweedFS only.

No workflow and no worker: the functions the tools and activities run are called directly
against a real SeaweedFS on free ports, each with a fresh `WorkspaceFiles` (one per activity
attempt, as the tool activity does):

* `list_files`, `search_files`, `read_file`, `write_file`: activities/tools/file_tools.py
  (`search_files` looks for a word no file holds, so it reads every file: "cold" with the
  worker's content cache emptied first, one GET per file; "warm" again, the cache holding
  every file: one listing and a scan in memory);
* phase snapshot: `SnapshotActivities.snapshot_phase`, first, again with nothing changed and
  after 10 files changed (each one listing and one PUT: copy-on-write, kept_versions.py);
* `write_file` of a new file, and over a file in two ways: its version the latest snapshot
  names (kept first: one server-side copy) and one written since (no copy);
* phase archive: `WorkspaceActivities.archive_phase` (one small YAML record);
* one 1 MB and one 10 MB file through `read_file` / `write_file` (the 10 MB write with
  `max_file_bytes` raised: the default limit, 5 MB, refuses it).

Workspaces hold N files of 1 KB in folders of 100. Each figure is the median of `--repeat`
calls (a snapshot is timed once per kind: a phase is snapshotted once).

    python -m switchback.bench.workspace_growth [--sizes 100,1000,10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from switchback.activities.storage.content_cache import ContentCache
from switchback.activities.storage.files import WorkspaceFiles
from switchback.activities.storage.s3 import S3Store
from switchback.activities.storage.snapshots import SnapshotActivities
from switchback.activities.storage.workspace import WorkspaceActivities
from switchback.activities.tools.file_tools import list_files, read_file, search_files, write_file
from switchback.activities.tools.registry import (
    ListFilesArgs,
    ReadFileArgs,
    SearchFilesArgs,
    WriteFileArgs,
)
from switchback.bench.harness import machine_line, seaweed_store
from switchback.workflows.contract import ArchiveRequest, SnapshotRequest, ToolLimits, WorkspaceRef

BUCKET = "switchback"
LIMITS = ToolLimits(read_max_chars=20_000, max_file_bytes=5_000_000, min_todos=1, max_todos=20)
BIG_LIMITS = LIMITS.model_copy(update={"max_file_bytes": 20_000_000})
KB = ("lorem ipsum dolor sit amet, consectetur adipiscing elit\n" * 19)[:1023] + "\n"
Timed = Callable[[], Awaitable[Any]]


async def timed(fn: Timed, repeat: int) -> float:
    """Median milliseconds of `repeat` calls of `fn`."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def populate(s3: S3Store, ws: WorkspaceRef, n: int) -> float:
    """N distinct files of 1 KB under work/dir_<k>/ (100 a folder); seconds taken."""
    sem, t0 = asyncio.Semaphore(32), time.perf_counter()

    async def put(i: int) -> None:
        async with sem:
            await s3.put(ws.bucket, f"{ws.job_id}/work/dir_{i // 100:03d}/f_{i:05d}.md",
                         f"{i:05d} {KB[6:]}".encode(), "text/markdown; charset=utf-8")
    await asyncio.gather(*(put(i) for i in range(n)))
    return time.perf_counter() - t0


async def workspace_row(s3: S3Store, n: int, repeat: int) -> dict[str, float]:
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"growth-{n}-{uuid.uuid4().hex[:6]}")
    row = {"populate_s": await populate(s3, ws, n)}

    def files() -> WorkspaceFiles:
        return WorkspaceFiles(s3, ws)
    k = iter(range(10**6))
    row["list_files"] = await timed(lambda: list_files(files(), ListFilesArgs(), LIMITS), repeat)
    def search() -> Awaitable[Any]:
        return search_files(files(), SearchFilesArgs(query="zzz-not-there"), LIMITS)
    s3.contents = ContentCache()  # cold: this worker has read none of the files yet
    row["search_files cold"] = await timed(search, 1)
    row["search_files warm"] = await timed(search, repeat)
    row["read_file"] = await timed(lambda: read_file(
        files(), ReadFileArgs(path="work/dir_000/f_00007.md"), LIMITS), repeat)
    snap = SnapshotActivities(s3)
    phases = iter(range(1, 100))

    async def snapshot() -> None:
        nonlocal ws
        phase = next(phases)
        await snap.snapshot_phase(SnapshotRequest(workspace=ws, phase=phase,
                                                  state={"phase": 1}))
        ws = ws.model_copy(update={"snapshot": phase})  # the workflow names it from then on
    row["snapshot first"] = await timed(snapshot, 1)
    row["write_file new"] = await timed(lambda: write_file(
        files(), WriteFileArgs(path=f"new/n_{next(k)}.md", content=KB), LIMITS), repeat)
    named = iter(range(20, 100))  # files the snapshot names, one per call

    def replace(path: str) -> Awaitable[Any]:
        return write_file(files(), WriteFileArgs(path=path, content=KB + str(next(k))), LIMITS)
    row["write_file overwrite, snapshot's version (kept first)"] = await timed(
        lambda: replace(f"work/dir_000/f_{next(named):05d}.md"), repeat)
    await replace("work/dir_000/f_00003.md")  # (now this phase's version)
    row["write_file overwrite, this phase's version"] = await timed(
        lambda: replace("work/dir_000/f_00003.md"), repeat)
    row["snapshot unchanged"] = await timed(snapshot, 1)
    for i in range(10):  # (through the tool: each keeps the version the snapshot names)
        await replace(f"work/dir_000/f_{i:05d}.md")
    row["snapshot 10 changed"] = await timed(snapshot, 1)
    record = {"phase": 1, "todos": [{"id": i, "content": f"todo {i}", "done": True}
                                    for i in range(1, 6)], "steps": 20}
    archive = WorkspaceActivities(s3)
    row["archive_phase"] = await timed(lambda: archive.archive_phase(ArchiveRequest(
        workspace=ws, phase=next(phases), record=record)), repeat)
    return row


async def big_file(s3: S3Store, ws: WorkspaceRef, mb: int, repeat: int) -> dict[str, float]:
    text, path, k = KB * 1024 * mb, f"big_{mb}mb.md", iter(range(10**6))

    async def write() -> None:  # a new version each time: a real overwrite
        await write_file(WorkspaceFiles(s3, ws), WriteFileArgs(
            path=path, content=text[:-8] + f"{next(k):08d}"), BIG_LIMITS)
    w = await timed(write, repeat)
    r = await timed(lambda: read_file(WorkspaceFiles(s3, ws), ReadFileArgs(path=path), LIMITS),
                    repeat)
    return {"write": w, "read": r}


async def big_files(s3: S3Store, repeat: int) -> dict[str, dict[str, float]]:
    ws = WorkspaceRef(bucket=BUCKET, job_id=f"growth-big-{uuid.uuid4().hex[:6]}")
    await SnapshotActivities(s3).snapshot_phase(SnapshotRequest(workspace=ws, phase=1,
                                                                state={}))
    ws = ws.model_copy(update={"snapshot": 1})  # (as in a job: its writes are this phase's)
    return {f"{mb} MB": await big_file(s3, ws, mb, repeat) for mb in (1, 10)}


async def measure(sizes: list[int], repeat: int) -> tuple[dict, dict]:
    async with seaweed_store(BUCKET, "switchback-growth-") as s3:
        rows = {n: await workspace_row(s3, n, repeat) for n in sizes}
        return rows, await big_files(s3, repeat)


def tables(rows: dict[int, dict[str, float]], big: dict[str, dict[str, float]],
           repeat: int) -> str:
    ops = [op for op in next(iter(rows.values())) if op != "populate_s"]
    lines = [f"workspace growth, SeaweedFS direct - {machine_line()}",
             f"1 KB files, 100 a folder; ms, median of {repeat} calls (snapshots: 1 call)", "",
             "| operation | " + " | ".join(f"{n:,} files" for n in rows) + " |",
             "| --- |" + " ---: |" * len(rows)]
    lines += [f"| {op} | " + " | ".join(f"{r[op]:.1f}" for r in rows.values()) + " |"
              for op in ops]
    lines.append("| (populating, s) | " + " | ".join(f"{r['populate_s']:.1f}"
                                                      for r in rows.values()) + " |")
    lines += ["", "| one file | write_file ms | read_file ms |", "| --- | ---: | ---: |"]
    lines += [f"| {size} | {v['write']:.1f} | {v['read']:.1f} |" for size, v in big.items()]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="100,1000,10000")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    rows, big = asyncio.run(measure(sizes, a.repeat))
    print(tables(rows, big, a.repeat))


if __name__ == "__main__":
    main()
